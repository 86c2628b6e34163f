/* slab.h -- memory for cached blocks, carved from 2 MiB slabs.
 *
 * A warm read walks the block cache at random: an index block, a data block,
 * a bloom chunk, each on pages of its own. On 4 KiB pages a cache of a few
 * GiB has far more pages than the TLB holds, so nearly every block a read
 * touches costs a page walk too. Slabs are 2 MiB, aligned, and asked to be
 * huge pages (madvise MADV_HUGEPAGE, honoured where transparent huge pages
 * are enabled as "madvise" or "always"), so a few thousand TLB entries cover
 * the whole cache.
 *
 * Objects come in size classes eight to a doubling (at most 1/8 wasted) from
 * 64 bytes to SLAB_OBJECT_MAX; each slab holds objects of one class. A slab
 * whose last object is freed goes back to the system, but for SLAB_SPARES
 * empty slabs kept for whichever class needs one next: a table retired from
 * the cache returns its memory without any trimming of the heap.
 *
 * Thread-safe: one mutex per class. Built with ASan (or MSan), every object
 * is a malloc of its own, so that the sanitizer sees each block's bounds.
 */
#ifndef KILN_STORAGE_BASE_SLAB_H
#define KILN_STORAGE_BASE_SLAB_H

#include <stddef.h>

#define SLAB_BYTES ((size_t)2 << 20)
/* Empty slabs kept mapped for reuse, at most. */
#define SLAB_SPARES 4
/* The largest object a slab holds: larger ones are a malloc of their own. */
#define SLAB_OBJECT_MAX ((size_t)256 << 10)

/* Memory for n bytes (n <= SLAB_OBJECT_MAX), aligned to 16; aborts when the
 * system has none. *usable is set to the bytes the object really takes (its
 * class's size), what a budget should count. */
void *slab_alloc(size_t n, size_t *usable);

/* Give back an object of slab_alloc. p may be NULL. */
void slab_free(void *p);

/* An anonymous, zeroed mapping of n bytes (n a multiple of SLAB_BYTES),
 * aligned to SLAB_BYTES, for the slabs and for other caches that keep memory
 * of their own (the serving row cache); give it back with munmap(p, n). NULL
 * when the system has no memory. Not counted by slab_mapped_bytes.
 *
 * The pages come from the system's reserved huge pages (vm.nr_hugepages)
 * while it has them, else they are advised to be transparent huge pages.
 * Reserved pages are never sampled by a kernel looking for cold memory
 * (DAMON), whose samples stall a read of a transparent huge page. Once the
 * pool cannot give a mapping, or with KILN_HUGETLB=0 in the environment,
 * only transparent huge pages are used. Reserved pages are not counted in
 * a process's resident set (VmRSS); slab_hugetlb_bytes gives them. */
void *slab_map_huge(size_t n);

/* A zeroed table of n bytes read at random (a hash index, a cache of
 * sums), aligned to a cache line: once it spans a slab, from slab_map_huge
 * with n rounded up to whole slabs, so that a lookup's miss is not also a
 * page walk; smaller, from the heap. Aborts when the system has no memory.
 * Give it back with slab_table_free and the same n. */
void *slab_table_alloc(size_t n);
void slab_table_free(void *p, size_t n);

/* Bytes mapped from the reserved huge page pool so far (never decreases). */
size_t slab_hugetlb_bytes(void);

/* Bytes of slabs mapped now, over all classes (for tests and statistics). */
size_t slab_mapped_bytes(void);

/* 1 if objects come from slabs, 0 in an ASan or MSan build (plain malloc). */
int slab_enabled(void);

#endif
