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
;;   a sibling that merely begins with the same characters (P-other); (regex #"R") a path
;;   the POSIX extended regular expression R matches (SBPL's #"..." is a string read
;;   without escapes; any other spelling of a regex is refused);
;; - of the rules that apply, the last one in the profile decides.
;; Whether Seatbelt really lets the last matching rule decide, or lets any rule with a
;; filter outrank every rule without one, is not documented: each question is judged
;; both ways, and a profile whose meaning would differ between the two is an error.
;; The second argument of a query is the operation's path, or for an operation that
;; has none (user-preference-write, job-creation) any word: only a rule without a
;; filter can apply to it.
;; Any other form or filter is an error: the reader judges nothing it does not know.
(use-modules (rnrs bytevectors) (ice-9 format) (ice-9 regex) (srfi srfi-1) (srfi srfi-9))

;; SBPL's raw string, #"...": everything up to the next double quote, as is.
(define-record-type <raw-string> (raw-string text) raw-string? (text raw-string-text))
(read-hash-extend #\"
                  (lambda (c port)
                    (let loop ((chars '()))
                      (let ((ch (read-char port)))
                        (cond ((eof-object? ch) (error "a #\" string without its end"))
                              ((char=? ch #\") (raw-string (list->string (reverse chars))))
                              (else (loop (cons ch chars))))))))

(define (hex s)
  (apply string-append
         (map (lambda (b) (format #f "~2,'0x" b)) (bytevector->u8-list (string->utf8 s)))))

(define (show x)
  (cond ((string? x) (string-append "\"" (hex x) "\""))
        ((raw-string? x) (string-append "#\"" (hex (raw-string-text x)) "\""))
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
  (unless (and (list? f) (= (length f) 2)) (error "unknown filter" f))
  (let ((kind (car f)) (p (cadr f)))
    (cond ((and (eq? kind 'literal) (string? p)) (string=? path p))
          ((and (eq? kind 'subpath) (string? p))
           (or (string=? path p)
               (string=? p "/")
               (string-prefix? (string-append p "/") path)))
          ((and (eq? kind 'regex) (raw-string? p))
           (and (regexp-exec (make-regexp (raw-string-text p) regexp/extended) path) #t))
          (else (error "unknown filter" f)))))

;; The rules of FORMS that apply to OP on PATH, in profile order, each as
;; (action . filtered?), and the default.
(define (applicable forms op path)
  (let loop ((forms forms) (default #f) (rules '()))
    (if (null? forms)
        (values (reverse rules) default)
        (let ((form (car forms)))
          (cond ((and (pair? form) (eq? (car form) 'version)) (loop (cdr forms) default rules))
                ((and (pair? form) (memq (car form) '(allow deny)))
                 (let* ((action (car form))
                        (ops (filter symbol? (cdr form)))
                        (filters (filter pair? (cdr form))))
                   (unless (and (pair? ops) (= (length (cdr form)) (+ (length ops) (length filters))))
                     (error "unexpected rule" form))
                   (cond ((equal? ops '(default))
                          (unless (null? filters) (error "default with a filter" form))
                          (loop (cdr forms) action rules))
                         ((memq 'default ops) (error "default among other operations" form))
                         ((and (any (lambda (o) (operation-names? o op)) ops)
                               (or (null? filters) (any (lambda (f) (filter-matches? f path)) filters)))
                          (loop (cdr forms) default (cons (cons action (pair? filters)) rules)))
                         (else (loop (cdr forms) default rules)))))
                (else (error "unexpected form" form)))))))

;; 'allow or 'deny for OP on PATH: the last applicable rule, or the default; and the
;; same when a rule with a filter outranks every rule without one. They must agree.
(define (decide forms op path)
  (call-with-values
      (lambda () (applicable forms op path))
    (lambda (rules default)
      (let* ((last-of (lambda (rs) (and (pair? rs) (car (last rs)))))
             (by-order (or (last-of rules) default))
             (by-filter (or (last-of (filter cdr rules)) (last-of rules) default)))
        (unless by-order (error "no rule decides" op path))
        (unless (eq? by-order by-filter)
          (error "the profile's meaning depends on how Seatbelt ranks rules" op path))
        by-order))))

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
