/* crc32c.h -- CRC-32C (Castagnoli), as used by HFile block checksums.
 *
 * Reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF (iSCSI, SSE4.2
 * crc32 instruction). Uses the SSE4.2 instruction when the CPU has it, chosen
 * once at first use, and a slicing-by-8 table otherwise. Thread-safe.
 */
#ifndef KILN_CRC32C_H
#define KILN_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of data[0..n). */
uint32_t crc32c_value(const void *data, size_t n);

/* Continue a CRC: crc32c_extend(crc32c_value(a), b) == crc32c_value(a||b). */
uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n);

/* Force the portable implementation (for tests); returns the previous setting. */
int crc32c_force_portable(int on);

#endif
