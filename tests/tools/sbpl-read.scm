;; An independent reading of a Seatbelt profile: Guile's own reader parses the file as
;; S-expressions, and every datum is printed back, one top-level form per line, with
;; each string shown as the hex of its UTF-8 bytes. The tests compare that with what
;; the policy should give, so neither structure nor bytes are judged by confine's own
;; code.
;;
;;   guile --no-auto-compile -s sbpl-read.scm PROFILE
(use-modules (rnrs bytevectors) (ice-9 format))

(define (hex s)
  (apply string-append
         (map (lambda (b) (format #f "~2,'0x" b)) (bytevector->u8-list (string->utf8 s)))))

(define (show x)
  (cond ((string? x) (string-append "\"" (hex x) "\""))
        ((symbol? x) (symbol->string x))
        ((number? x) (number->string x))
        ((null? x) "()")
        ((pair? x) (string-append "(" (string-join (map show x) " ") ")"))
        (else (error "unexpected datum" x))))

(fluid-set! %default-port-encoding "UTF-8")
(with-input-from-file (cadr (command-line))
  (lambda ()
    (let loop ((x (read)))
      (unless (eof-object? x)
        (display (show x))
        (newline)
        (loop (read))))))
