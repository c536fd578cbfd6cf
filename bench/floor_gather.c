/* The bound of a gather: every requested record copied, in request order, from one
 * buffer that holds the whole dataset in memory, and its bytes CRC32C-ed (SSE4.2).
 *
 * usage: floor_gather PREFIX INDICES
 *   PREFIX.bin   the records back to back (loaded whole into memory first)
 *   PREFIX.idx   Megatron-style index (bench/records_peers.py build-megatron)
 *   INDICES      decimal record indices, white-space separated
 * Prints `count bytes crc32c` like `barecat-records gather --digest`, and on stderr
 * `elapsed SECONDS` of the copy loop alone (the dataset loaded, the indices parsed,
 * every page of the buffer touched before the clock starts).
 */
#include <fcntl.h>
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static unsigned char *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(path); exit(1); }
    unsigned char *buf = malloc(st.st_size ? st.st_size : 1);
    size_t done = 0;
    while (done < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + done, st.st_size - done);
        if (n <= 0) { perror(path); exit(1); }
        done += n;
    }
    close(fd);
    *len = done;
    return buf;
}

static uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = ~crc;
    while (n >= 8) { uint64_t v; memcpy(&v, p, 8); c = _mm_crc32_u64(c, v); p += 8; n -= 8; }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor_gather PREFIX INDICES\n"); return 2; }
    char path[4096];
    size_t binlen, idxlen;
    snprintf(path, sizeof path, "%s.bin", argv[1]);
    unsigned char *bin = slurp(path, &binlen);
    snprintf(path, sizeof path, "%s.idx", argv[1]);
    unsigned char *idx = slurp(path, &idxlen);
    /* Megatron MMIDIDX: magic[9] version<Q> dtype<B> len<Q> doc_count<Q>, then
     * sizes int32[len], pointers int64[len], doc_idx int64[doc_count]. */
    uint64_t n;
    memcpy(&n, idx + 18, 8);
    const unsigned char *sizes = idx + 34, *ptrs = idx + 34 + 4 * n;
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 1; }
    size_t cap = 1 << 20, m = 0;
    uint64_t *want = malloc(cap * sizeof *want), i;
    while (fscanf(f, "%lu", &i) == 1) {
        if (i >= n) { fprintf(stderr, "index %lu out of range\n", i); return 1; }
        if (m == cap) want = realloc(want, (cap *= 2) * sizeof *want);
        want[m++] = i;
    }
    unsigned char *out = malloc(1 << 24);
    memset(out, 0, 1 << 24);
    uint64_t count = 0, bytes = 0;
    uint32_t crc = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t k = 0; k < m; k++) {
        int32_t size; int64_t ptr;
        memcpy(&size, sizes + 4 * want[k], 4);
        memcpy(&ptr, ptrs + 8 * want[k], 8);
        memcpy(out, bin + ptr, size);
        crc = crc32c(crc, out, size);
        count++; bytes += size;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "elapsed %.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    printf("%lu %lu %08x\n", count, bytes, crc);
    return 0;
}
