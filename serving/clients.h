/* clients.h -- open connections per client address, with a cap.
 *
 * The server's connection cap is global; without a cap per client one host
 * (a runaway pool, a slowloris) can take every connection. Worker 0 counts
 * a connection in as it accepts it and the worker that closes it counts it
 * out, so the table is shared and locked.
 *
 * Thread-safety: every call may come from any thread.
 */
#ifndef KILN_CLIENTS_H
#define KILN_CLIENTS_H

#include <stdint.h>

#define CLIENTS_KEY_LEN 16

typedef struct clients clients;

/* cap: connections per address at most (>= 1). */
clients *clients_new(int cap);
void clients_free(clients *c);   /* c may be NULL */

/* Count a connection from key in: 1, or 0 when key already has cap open
 * connections (then nothing is counted). */
int clients_enter(clients *c, const uint8_t key[CLIENTS_KEY_LEN]);
/* Count one out (after a successful clients_enter). */
void clients_leave(clients *c, const uint8_t key[CLIENTS_KEY_LEN]);
/* Connections open from key now. */
int clients_count(clients *c, const uint8_t key[CLIENTS_KEY_LEN]);

/* The key of fd's peer: its IPv6 address, or an IPv4 address mapped into
 * IPv6. 0 when the peer has no IP address (then it is not counted). */
int clients_peer_key(int fd, uint8_t key[CLIENTS_KEY_LEN]);

#endif
