/* Names that come from a target (thread names, symbols of its binaries, paths it maps)
 * made safe to print anywhere: on a root user's terminal, in JSON, in folded stacks. */
#ifndef SRVSCOPE_ESCAPE_H
#define SRVSCOPE_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* Room for a 16-byte comm (15 bytes and a NUL) once escaped: 4 characters a byte. */
#define COMM_ESCAPED_SIZE (15 * 4 + 1)

/* The length of the valid, shortest-form UTF-8 character at s (at most len bytes, len >
 * 0; 1 for any ASCII byte), or 0 when the bytes at s are not one (a stray continuation
 * byte, an overlong form, a surrogate, beyond U+10FFFF, cut short). */
size_t utf8_char_len(const char *s, size_t len);

/* Whether len bytes of s would print as they are: valid UTF-8, with no control character
 * (C0, DEL, C1), no ';' (the folded stacks' frame separator) and no '\' (so that an
 * escape can't be forged). */
bool name_is_safe(const char *s, size_t len);

/* Writes len bytes of in to out (size bytes, NUL-terminated, size > 0) with every byte
 * that is not safe as above written as \xNN; valid UTF-8 characters other than C1
 * controls are kept. When out is too small the result stops before the first byte or
 * escape that does not fit (an escape is never cut). Returns the length written. */
size_t name_escape(char *out, size_t size, const char *in, size_t len);

/* Escapes the NUL-terminated s in place within its buffer of size bytes (a fixed array
 * such as a 16-byte comm): the end is dropped if the escaped name does not fit. */
void name_escape_inplace(char *s, size_t size);

/* The NUL-terminated s as it may be printed: s itself when it is safe, else its escaped
 * form written into buf (size bytes; cut as name_escape cuts). */
const char *name_shown(const char *s, char *buf, size_t size);

/* The escaped copy of s, malloc'ed (the whole name, never cut). */
char *name_escape_dup(const char *s);

#endif
