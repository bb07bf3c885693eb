;; guile_read_check.scm — reads every golden profile with GNU Guile's own
;; reader, as a second, independent parser beside src/macos/sbpl_reader.cpp
;; (docs/macos-backend.md, "The structural checker"). SBPL descends from
;; TinyScheme, so a profile must read as ordinary Scheme data, with #"..."
;; raw strings added here.
;;
;;   guile --no-auto-compile -s tests/macos/guile_read_check.scm GOLDEN.sb...
;;
;; Checks: the text reads to the end; the first form is (version 1); every
;; form is (version ...), (allow ...) or (deny ...); (deny default) is there
;; and (allow default) is not; every (param "K") names a ";; param K=..."
;; header line of the golden. Prints one line per file; exits 1 on a failure.
(use-modules (ice-9 rdelim) (ice-9 match) (srfi srfi-1))

;; #"..." : a string whose backslashes are kept, ending at the next quote.
(read-hash-extend #\"
  (lambda (chr port)
    (let loop ((acc '()))
      (let ((c (read-char port)))
        (cond ((eof-object? c) (error "raw string is never terminated"))
              ((char=? c #\") (list->string (reverse acc)))
              (else (loop (cons c acc))))))))

(define (header-params file)
  (call-with-input-file file
    (lambda (port)
      (let loop ((keys '()))
        (let ((line (read-line port)))
          (cond ((eof-object? line) keys)
                ((string-prefix? ";; param " line)
                 (let* ((kv (substring line 9)) (eq (string-index kv #\=)))
                   (loop (cons (substring kv 0 eq) keys))))
                (else (loop keys))))))))

(define (read-all file)
  (call-with-input-file file
    (lambda (port)
      (let loop ((forms '()))
        (let ((form (read port)))
          (if (eof-object? form) (reverse forms) (loop (cons form forms))))))))

;; Every (param "K") anywhere inside `tree`.
(define (params-in tree)
  (match tree
    (('param (? string? key)) (list key))
    ((items ...) (append-map params-in items))
    (_ '())))

(define (problems file)
  (let* ((forms (read-all file)) (keys (header-params file)))
    (filter identity
      (list
        (and (not (equal? (car forms) '(version 1))) "the first form is not (version 1)")
        (and (not (member '(deny default) forms)) "no (deny default)")
        (and (find (lambda (f) (and (pair? f) (eq? (car f) 'allow) (memq 'default f))) forms) "(allow default)")
        (and (find (lambda (f) (not (and (pair? f) (memq (car f) '(version allow deny))))) forms)
             "a form that is not version/allow/deny")
        (let ((missing (lset-difference string=? (params-in forms) keys)))
          (and (pair? missing) (string-append "parameters not supplied: " (string-join missing " "))))))))

(define failed 0)
(for-each
  (lambda (file)
    (let ((found (catch #t (lambda () (problems file))
                   (lambda (key . args) (list (format #f "does not read: ~a ~s" key args))))))
      (if (null? found)
          (format #t "ok      ~a~%" file)
          (begin (set! failed (+ failed 1))
                 (format #t "FAILED  ~a: ~a~%" file (string-join found "; "))))))
  (cdr (command-line)))
(exit (if (zero? failed) 0 1))
