;; An independent reading of a Seatbelt profile: Guile's own reader parses the file as
;; S-expressions, and every datum is printed back, one top-level form per line, with
;; each string shown as the hex of its UTF-8 bytes. The tests compare that with what
;; the policy should give, so neither structure nor bytes are judged by confine's own
;; code.
;;
;;   guile --no-auto-compile -s sbpl-read.scm PROFILE
;;
;; With --decide, it judges operations instead, one line per OPERATION PATH pair,
;; "allow" or "deny", by the rules as Seatbelt applies them:
;;
;;   guile --no-auto-compile -s sbpl-read.scm PROFILE --decide OPERATION PATH ...
;;
;; - a rule (allow|deny OPERATION... FILTER...) applies to an operation one of its
;;   operations names: exactly, or by prefix when it ends in `*` (file-write* names
;;   file-write-data, file-write-unlink, ...); `default` is what applies when no other
;;   rule does;
;; - it applies to a path when it has no filter, or when one of its filters matches:
;;   (literal P) the path P alone; (subpath P) P and everything beneath it (P/...), never
;;   a sibling that merely begins with the same characters (P-other);
;; - of the rules that apply, the last one in the profile decides.
;; Any other form or filter is an error: the reader judges nothing it does not know.
(use-modules (rnrs bytevectors) (ice-9 format) (srfi srfi-1))

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

(define (read-forms file)
  (with-input-from-file file
    (lambda ()
      (let loop ((x (read)) (forms '()))
        (if (eof-object? x) (reverse forms) (loop (read) (cons x forms)))))))

(define (operation-names? rule-op op)
  (let ((name (symbol->string rule-op)))
    (if (string-suffix? "*" name)
        (string-prefix? (string-drop-right name 1) op)
        (string=? name op))))

(define (filter-matches? f path)
  (unless (and (list? f) (= (length f) 2) (string? (cadr f)))
    (error "unknown filter" f))
  (let ((kind (car f)) (p (cadr f)))
    (cond ((eq? kind 'literal) (string=? path p))
          ((eq? kind 'subpath)
           (or (string=? path p)
               (string=? p "/")
               (string-prefix? (string-append p "/") path)))
          (else (error "unknown filter" f)))))

;; 'allow or 'deny for OP on PATH.
(define (decide forms op path)
  (let loop ((forms forms) (default #f) (last #f))
    (if (null? forms)
        (or last default (error "no rule decides" op path))
        (let ((form (car forms)))
          (cond ((and (pair? form) (eq? (car form) 'version)) (loop (cdr forms) default last))
                ((and (pair? form) (memq (car form) '(allow deny)))
                 (let* ((action (car form))
                        (ops (filter symbol? (cdr form)))
                        (filters (filter pair? (cdr form))))
                   (unless (= (length (cdr form)) (+ (length ops) (length filters)))
                     (error "unexpected rule" form))
                   (cond ((equal? ops '(default)) (loop (cdr forms) action last))
                         ((memq 'default ops) (error "default among other operations" form))
                         ((and (any (lambda (o) (operation-names? o op)) ops)
                               (or (null? filters) (any (lambda (f) (filter-matches? f path)) filters)))
                          (loop (cdr forms) default action))
                         (else (loop (cdr forms) default last)))))
                (else (error "unexpected form" form)))))))

(fluid-set! %default-port-encoding "UTF-8")
(let* ((args (command-line))
       (forms (read-forms (cadr args))))
  (if (and (> (length args) 2) (string=? (caddr args) "--decide"))
      (let loop ((queries (cdddr args)))
        (unless (null? queries)
          (when (null? (cdr queries)) (error "an operation without a path" (car queries)))
          (display (symbol->string (decide forms (car queries) (cadr queries))))
          (newline)
          (loop (cddr queries))))
      (for-each (lambda (x) (display (show x)) (newline)) forms)))
