/* dataset.h -- the serving benchmarks' rows, as the RocksDB and LevelDB peer
 * harnesses define them (rocksdb_bench/dataset.h in the peer benchmark
 * directory, see scripts/bench.sh --peers): a data definition copied unchanged
 * below this note, so that kiln-bench, kiln-store-bench and the peers read and
 * write the same keys and values. Change it only together with the peers' copy.
 */
/* Deterministic dataset shared by rbench (RocksDB) and lbench (LevelDB).
 *
 * Row i (0 <= i < N):
 *   key   = 16 bytes: big-endian uint64 user id, big-endian uint64 reverse ts
 *           uid   = UID_BASE + 2*(i / ROWS_PER_USER)      (even uids only)
 *           ts    = TS0 - 60*(i % ROWS_PER_USER)          (newest first)
 *           revts = UINT64_MAX - ts
 *           -> keys are strictly ascending in i (bytewise order).
 *   missing key j = same layout but uid = UID_BASE + 2*(j / ROWS_PER_USER) + 1
 *           (odd uid): always inside the file's key range, never present.
 *   value = 100 bytes, "moderately compressible": a JSON-ish record with fixed
 *           field names, decimal numbers derived from i, and a 32-char hex tag
 *           from splitmix64(i ^ VALUE_SEED), space padded to 100 bytes.
 * Random access streams use splitmix64 with seed (RUN_SEED + thread id).
 */
#ifndef DATASET_H
#define DATASET_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define KEY_LEN 16
#define VAL_LEN 100
#define ROWS_PER_USER 10ULL
#define UID_BASE 1000000ULL
#define TS0 1700000000ULL
#define VALUE_SEED 0x9E3779B97F4A7C15ULL
#define RUN_SEED 42ULL

static inline uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static inline uint64_t mix1(uint64_t x) { uint64_t s = x; return splitmix64(&s); }

static inline void put_be64(uint8_t *p, uint64_t v) {
  for (int k = 7; k >= 0; k--) { p[k] = (uint8_t)v; v >>= 8; }
}
/* uid_offset lets us build a second, non-overlapping data set (different uid range). */
static inline void make_key_off(uint64_t i, int missing, uint64_t uid_offset, uint8_t out[KEY_LEN]) {
  uint64_t uid = UID_BASE + uid_offset + 2 * (i / ROWS_PER_USER) + (missing ? 1 : 0);
  uint64_t ts = TS0 - 60 * (i % ROWS_PER_USER);
  put_be64(out, uid);
  put_be64(out + 8, UINT64_MAX - ts);
}
static inline void make_key(uint64_t i, int missing, uint8_t out[KEY_LEN]) { make_key_off(i, missing, 0, out); }

/* version lets a "new version of the view" carry different values for the same keys. */
static inline void make_value_v(uint64_t i, uint64_t version, char out[VAL_LEN]) {
  static const char hex[] = "0123456789abcdef";
  uint64_t a = mix1(i ^ VALUE_SEED ^ (version << 48)), b = mix1(a);
  char tag[33];
  for (int k = 0; k < 16; k++) { tag[k] = hex[(a >> (4 * k)) & 15]; tag[16 + k] = hex[(b >> (4 * k)) & 15]; }
  tag[32] = 0;
  char buf[160];
  int n = snprintf(buf, sizeof buf, "{\"uid\":%llu,\"ts\":%llu,\"clicks\":%u,\"v\":%llu,\"tag\":\"%s\"}",
                   (unsigned long long)(UID_BASE + 2 * (i / ROWS_PER_USER)),
                   (unsigned long long)(TS0 - 60 * (i % ROWS_PER_USER)),
                   (unsigned)(a % 1000), (unsigned long long)version, tag);
  if (n > VAL_LEN) n = VAL_LEN;
  memcpy(out, buf, (size_t)n);
  memset(out + n, ' ', VAL_LEN - (size_t)n);
}
static inline void make_value(uint64_t i, char out[VAL_LEN]) { make_value_v(i, 0, out); }

static inline double now_s(void) {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static inline uint64_t now_ns(void) {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}
/* percentile (nearest-rank) of sorted samples, in microseconds */
static inline double pct_us(const uint32_t *s, size_t n, double p) {
  if (!n) return 0;
  size_t idx = (size_t)(p * (double)n);
  if (idx >= n) idx = n - 1;
  return s[idx] / 1000.0;
}
#endif
