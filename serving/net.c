/* net.c -- socket helpers of net.h: getaddrinfo-based address parsing,
 * listeners with SO_REUSEPORT so that every worker thread accepts on its own
 * socket, and a connect with a poll(2) timeout for the clients.
 */
#include "serving/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

kiln_status
net_parse_addr(const char *text, net_addr *out, kiln_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(text);
    if (n == 0 || n >= NET_ADDR_MAX)
        return status_set(err, KILN_INVALID, "address '%s': expected HOST:PORT", text);
    snprintf(out->text, sizeof out->text, "%s", text);
    char host[NET_ADDR_MAX];
    const char *port;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':')
            return status_set(err, KILN_INVALID, "address '%s': expected [IPV6]:PORT", text);
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (colon == NULL || colon == text)
            return status_set(err, KILN_INVALID, "address '%s': expected HOST:PORT", text);
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
        if (strchr(host, ':') != NULL)
            return status_set(err, KILN_INVALID,
                              "address '%s': write IPv6 addresses as [ADDR]:PORT", text);
        port = colon + 1;
    }
    size_t pl = strlen(port);
    long pv = 0;
    for (size_t i = 0; i < pl; i++) {
        if (port[i] < '0' || port[i] > '9' || pl > 5) {
            pv = -1;
            break;
        }
        pv = pv * 10 + (port[i] - '0');
    }
    if (pl == 0 || pv < 0 || pv > 65535)
        return status_set(err, KILN_INVALID, "address '%s': bad port '%s'", text, port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || res == NULL)
        return status_set(err, KILN_NOT_FOUND, "address '%s': %s", text,
                          rc != 0 ? gai_strerror(rc) : "no address");
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    return KILN_OK;
}

int
net_addr_is_loopback(const net_addr *a)
{
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)&a->ss;
        return (ntohl(s->sin_addr.s_addr) >> 24) == 127;
    }
    if (a->ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&a->ss;
        return IN6_IS_ADDR_LOOPBACK(&s->sin6_addr);
    }
    return 0;
}

void
net_addr_format(const struct sockaddr *sa, socklen_t len, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    (void)len;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
        port = ntohs(s->sin_port);
        snprintf(out, cap, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
        port = ntohs(s->sin6_port);
        snprintf(out, cap, "[%s]:%d", host, port);
    } else {
        snprintf(out, cap, "?");
    }
}

int
net_set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, fl);
}

int
net_set_nodelay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

kiln_status
net_listen(const net_addr *a, int backlog, int reuseport, int *fd, kiln_err *err)
{
    *fd = -1;
    int s = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return status_set_errno(err, errno, "%s: socket", a->text);
    int one = 1;
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (reuseport && setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0)) {
        int e = errno;
        close(s);
        return status_set_errno(err, e, "%s: setsockopt", a->text);
    }
    if (bind(s, (const struct sockaddr *)&a->ss, a->len) != 0) {
        int e = errno;
        close(s);
        return status_set_errno(err, e, "%s: bind", a->text);
    }
    if (listen(s, backlog) != 0) {
        int e = errno;
        close(s);
        return status_set_errno(err, e, "%s: listen", a->text);
    }
    *fd = s;
    return KILN_OK;
}

int
net_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

int
net_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0 || errno != EINTR)
            return fd;
    }
}

static void
net_set_timeouts(int fd, int ms)
{
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

kiln_status
net_connect(const net_addr *a, int timeout_ms, int io_timeout_ms, int *fd, kiln_err *err)
{
    *fd = -1;
    int s = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return status_set_errno(err, errno, "%s: socket", a->text);
    int rc = connect(s, (const struct sockaddr *)&a->ss, a->len);
    if (rc != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(s);
        return status_set_errno(err, e, "%s: connect", a->text);
    }
    if (rc != 0) {
        struct pollfd p = {s, POLLOUT, 0};
        int n;
        do {
            n = poll(&p, 1, timeout_ms);
        } while (n < 0 && errno == EINTR);
        if (n == 0) {
            close(s);
            return status_set_errno(err, ETIMEDOUT, "%s: connect", a->text);
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (n < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            int e = n < 0 ? errno : soerr ? soerr : errno;
            close(s);
            return status_set_errno(err, e, "%s: connect", a->text);
        }
    }
    net_set_nonblock(s, 0);
    net_set_nodelay(s);
    if (io_timeout_ms > 0)
        net_set_timeouts(s, io_timeout_ms);
    *fd = s;
    return KILN_OK;
}
