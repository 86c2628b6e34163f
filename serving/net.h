/* net.h -- socket helpers for the server and its clients (in the manner of
 * Redis's anet): address parsing, listening sockets (one per worker with
 * SO_REUSEPORT), accept, non-blocking mode and TCP_NODELAY, and a blocking
 * connect with a timeout for clients.
 *
 * Addresses are "HOST:PORT" with HOST an IPv4 address, a bracketed IPv6
 * address ("[::1]:8080") or a name resolved with getaddrinfo. Every function
 * is thread-safe; errors name the address and carry errno.
 */
#ifndef KILN_NET_H
#define KILN_NET_H

#include <stddef.h>
#include <sys/socket.h>

#include "storage/base/status.h"

#define NET_ADDR_MAX 300

typedef struct net_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    char text[NET_ADDR_MAX];    /* as given, for messages */
} net_addr;

/* Parse and resolve "HOST:PORT" (the first address getaddrinfo returns).
 * KILN_INVALID for a malformed address or port, KILN_NOT_FOUND if HOST does
 * not resolve. */
kiln_status net_parse_addr(const char *text, net_addr *out, kiln_err *err);
/* 1 if the address is a loopback address (127.0.0.0/8 or ::1). */
int net_addr_is_loopback(const net_addr *a);
/* "127.0.0.1:8080" / "[::1]:8080" into out. */
void net_addr_format(const struct sockaddr *sa, socklen_t len, char *out, size_t cap);

/* A non-blocking listening socket bound to a (SO_REUSEADDR, and SO_REUSEPORT
 * when reuseport is set). KILN_IO naming the address (EADDRINUSE...). */
kiln_status net_listen(const net_addr *a, int backlog, int reuseport, int *fd, kiln_err *err);
/* The port a socket is bound to. */
int net_local_port(int fd);

/* Accept one connection, non-blocking and close-on-exec. Returns the fd, or
 * -1 with errno (EAGAIN when none is pending). */
int net_accept(int lfd);

int net_set_nonblock(int fd, int on);
int net_set_nodelay(int fd);

/* A blocking TCP connection to addr within timeout_ms, with TCP_NODELAY and
 * send/receive timeouts of io_timeout_ms (0: none). KILN_IO naming the
 * address ("connection refused"...). */
kiln_status net_connect(const net_addr *a, int timeout_ms, int io_timeout_ms, int *fd,
                        kiln_err *err);

#endif
