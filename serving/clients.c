/* clients.c -- a chained hash of client addresses to open connections. */
#include "serving/clients.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "storage/base/buf.h"

#define CLIENTS_BUCKETS 4096

typedef struct client_node {
    struct client_node *next;
    uint8_t key[CLIENTS_KEY_LEN];
    int open;
} client_node;

struct clients {
    pthread_mutex_t mu;
    int cap;
    client_node *bucket[CLIENTS_BUCKETS];
};

clients *
clients_new(int cap)
{
    clients *c = kiln_calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->cap = cap < 1 ? 1 : cap;
    return c;
}

void
clients_free(clients *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < CLIENTS_BUCKETS; i++) {
        for (client_node *n = c->bucket[i]; n != NULL;) {
            client_node *next = n->next;
            free(n);
            n = next;
        }
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static size_t
clients_hash(const uint8_t key[CLIENTS_KEY_LEN])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < CLIENTS_KEY_LEN; i++)
        h = (h ^ key[i]) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29)) % CLIENTS_BUCKETS;
}

/* The node of key in its chain (*link pointing at it), or NULL. */
static client_node *
clients_find(clients *c, const uint8_t key[CLIENTS_KEY_LEN], client_node ***link)
{
    client_node **l = &c->bucket[clients_hash(key)];
    while (*l != NULL && memcmp((*l)->key, key, CLIENTS_KEY_LEN) != 0)
        l = &(*l)->next;
    *link = l;
    return *l;
}

int
clients_enter(clients *c, const uint8_t key[CLIENTS_KEY_LEN])
{
    int ok = 1;
    pthread_mutex_lock(&c->mu);
    client_node **link;
    client_node *n = clients_find(c, key, &link);
    if (n == NULL) {
        n = kiln_calloc(1, sizeof *n);
        memcpy(n->key, key, CLIENTS_KEY_LEN);
        *link = n;
    }
    if (n->open >= c->cap)
        ok = 0;
    else
        n->open++;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

void
clients_leave(clients *c, const uint8_t key[CLIENTS_KEY_LEN])
{
    pthread_mutex_lock(&c->mu);
    client_node **link;
    client_node *n = clients_find(c, key, &link);
    if (n != NULL && --n->open <= 0) {
        *link = n->next;
        free(n);
    }
    pthread_mutex_unlock(&c->mu);
}

int
clients_count(clients *c, const uint8_t key[CLIENTS_KEY_LEN])
{
    pthread_mutex_lock(&c->mu);
    client_node **link;
    client_node *n = clients_find(c, key, &link);
    int open = n != NULL ? n->open : 0;
    pthread_mutex_unlock(&c->mu);
    return open;
}

int
clients_peer_key(int fd, uint8_t key[CLIENTS_KEY_LEN])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(key, 0, CLIENTS_KEY_LEN);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &a->sin_addr, 4);
        return 1;
    }
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        memcpy(key, &a->sin6_addr, CLIENTS_KEY_LEN);
        return 1;
    }
    return 0;
}
