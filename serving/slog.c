/* slog.c -- timestamped log lines on stderr (slog.h). A line is formatted
 * into a stack buffer and written with a single write(2); a message longer
 * than the buffer is cut.
 */
#include "serving/slog.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int slog_quiet;

void
slog_set_quiet(int quiet)
{
    atomic_store(&slog_quiet, quiet);
}

static void
slog_write(const char *level, const char *fmt, va_list ap)
{
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03dZ kiln-server[%d] %s: ",
                          (int)(tv.tv_usec / 1000), (int)getpid(), level);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    n += (size_t)m < sizeof line - n - 1 ? (size_t)m : sizeof line - n - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

void
slog_info(const char *fmt, ...)
{
    if (atomic_load(&slog_quiet))
        return;
    va_list ap;
    va_start(ap, fmt);
    slog_write("info", fmt, ap);
    va_end(ap);
}

void
slog_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    slog_write("warning", fmt, ap);
    va_end(ap);
}

void
slog_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    slog_write("error", fmt, ap);
    va_end(ap);
}
