/* slog.h -- the server's log: one line per event on stderr,
 *
 *   2026-11-21T13:20:00.123Z kiln-server[4242] info: listening on 127.0.0.1:8080
 *
 * Lines are written with one write(2) each, so lines of different threads
 * never interleave. Thread-safe. slog_set_quiet(1) drops info lines.
 */
#ifndef KILN_SLOG_H
#define KILN_SLOG_H

void slog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void slog_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void slog_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void slog_set_quiet(int quiet);

#endif
