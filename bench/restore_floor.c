/* The least a restore of a fully cached build costs, in one thread of plain
 * system calls: what bench/cache.py sets moon's restore beside.
 *
 * usage: restore_floor LIST
 *
 * LIST names, one a line, the work of a fresh checkout's restore:
 *   s PATH                  a source: read and hashed (a fresh checkout has no
 *                           stat cache, so every source's content is hashed)
 *   o MODE HASH BLOB PATH   an output: the blob read whole, its SHA-256 checked
 *                           against HASH once (the cache must never restore a
 *                           wrong output), written to a temporary name beside
 *                           PATH (O_EXCL, MODE) and renamed into place
 * Paths are relative to the current directory, or absolute. The list is read
 * first and is not part of the work; start-up is, as it is of moon's.
 *
 * SHA-256 is OpenSSL's when built with -DFLOOR_OPENSSL -lcrypto (its SHA-NI
 * path, as moon's BoringSSL has), else the portable one below. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef FLOOR_OPENSSL
#include <openssl/sha.h>
static void sha256(const unsigned char *data, size_t n, unsigned char out[32]) { SHA256(data, n, out); }
static const char *sha_name = "OpenSSL";
#else
static const char *sha_name = "portable C";
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static void block(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}
static void sha256(const unsigned char *data, size_t n, unsigned char out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t i = 0;
    for (; i + 64 <= n; i += 64) block(h, data + i);
    unsigned char tail[128] = {0};
    size_t rest = n - i;
    memcpy(tail, data + i, rest);
    tail[rest] = 0x80;
    size_t len = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int j = 0; j < 8; j++) tail[len - 1 - j] = (unsigned char)(bits >> (8 * j));
    block(h, tail);
    if (len == 128) block(h, tail + 64);
    for (int j = 0; j < 8; j++) {
        out[4 * j] = h[j] >> 24; out[4 * j + 1] = h[j] >> 16; out[4 * j + 2] = h[j] >> 8; out[4 * j + 3] = h[j];
    }
}
#endif

static void die(const char *what, const char *path) {
    fprintf(stderr, "restore_floor: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static unsigned char *buffer;
static size_t capacity;

/* The whole of `path` in `buffer`; its size. */
static size_t slurp(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("cannot open", path);
    struct stat info;
    if (fstat(fd, &info) != 0) die("cannot stat", path);
    size_t size = (size_t)info.st_size;
    if (size + 1 > capacity) {
        capacity = (size + 1) * 2;
        buffer = realloc(buffer, capacity);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buffer + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("cannot read", path);
        got += (size_t)n;
    }
    close(fd);
    return size;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: restore_floor LIST\n");
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (!list) die("cannot open", argv[1]);
    char line[8192], hash[65], blob[4096], path[4096], temp[4200];
    unsigned mode;
    unsigned char digest[32];
    static const char hex[] = "0123456789abcdef";
    long sources = 0, outputs = 0;
    unsigned sink = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 's' && line[1] == ' ') {
            size_t n = slurp(line + 2);
            sha256(buffer, n, digest);
            sink += digest[0];
            sources++;
        } else if (line[0] == 'o' && sscanf(line + 2, "%o %64s %4095s %4095s", &mode, hash, blob, path) == 4) {
            size_t n = slurp(blob);
            sha256(buffer, n, digest);
            for (int i = 0; i < 32; i++)
                if (hex[digest[i] >> 4] != hash[2 * i] || hex[digest[i] & 15] != hash[2 * i + 1]) {
                    fprintf(stderr, "restore_floor: %s does not match its hash\n", blob);
                    return 1;
                }
            char *slash = strrchr(path, '/');
            int dir = slash ? (int)(slash - path + 1) : 0;
            snprintf(temp, sizeof temp, "%.*s.floor-%d-%ld", dir, path, (int)getpid(), outputs);
            int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
            if (fd < 0) die("cannot create", temp);
            size_t put = 0;
            while (put < n) {
                ssize_t w = write(fd, buffer + put, n - put);
                if (w < 0 && errno == EINTR) continue;
                if (w < 0) die("cannot write", temp);
                put += (size_t)w;
            }
            if (close(fd) != 0) die("cannot write", temp);
            if (rename(temp, path) != 0) die("cannot rename", temp);
            outputs++;
        } else if (line[0]) {
            fprintf(stderr, "restore_floor: cannot read the line '%s'\n", line);
            return 2;
        }
    }
    fclose(list);
    printf("%ld sources hashed, %ld outputs restored (SHA-256: %s, %u)\n", sources, outputs, sha_name, sink & 1);
    return 0;
}
