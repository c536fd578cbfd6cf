/* The kernel's floor for extracting a tree of small files: create every file of a
 * manifest below DEST with only the system calls an extractor cannot avoid
 * (openat O_CREAT|O_EXCL|O_NOFOLLOW, write, futimens, close), on THREADS threads that
 * each take whole directories. No reading, no checksums, no safety checks.
 *
 * usage: floor_create MANIFEST DEST THREADS
 * MANIFEST: one "relative/path<TAB>size" line per file, files of a directory together.
 * Used by bench/extract.py.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct file { char *path; long size; };
static struct file *files;
static long nfiles, *dir_start, ndirs;
static int nthreads, root;
static char data[1 << 20];

static void mkdirs(char *dir) {
    for (char *p = dir; (p = strchr(p, '/')); p++) {
        *p = 0;
        if (mkdirat(root, dir, 0755) && errno != EEXIST) { perror(dir); exit(1); }
        *p = '/';
    }
    if (mkdirat(root, dir, 0755) && errno != EEXIST) { perror(dir); exit(1); }
}

static void *work(void *arg) {
    long t = (long)arg;
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1700000000, 0}};
    for (long d = t; d < ndirs; d += nthreads) {
        struct file *f = &files[dir_start[d]];
        char *slash = strrchr(f->path, '/');
        int dfd = root;
        if (slash) {
            *slash = 0;
            mkdirs(f->path);
            dfd = openat(root, f->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            *slash = '/';
            if (dfd < 0) { perror(f->path); exit(1); }
        }
        for (long i = dir_start[d]; i < dir_start[d + 1]; i++) {
            char *name = strrchr(files[i].path, '/');
            name = name ? name + 1 : files[i].path;
            int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0) { perror(files[i].path); exit(1); }
            for (long left = files[i].size; left > 0;) {
                ssize_t n = write(fd, data, left < (long)sizeof data ? left : (long)sizeof data);
                if (n <= 0) { perror("write"); exit(1); }
                left -= n;
            }
            if (futimens(fd, ts)) { perror("futimens"); exit(1); }
            close(fd);
        }
        if (dfd != root) close(dfd);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor_create MANIFEST DEST THREADS\n"); return 2; }
    FILE *m = fopen(argv[1], "r");
    if (!m) { perror(argv[1]); return 1; }
    long cap = 1024;
    files = malloc(cap * sizeof *files);
    dir_start = malloc((cap + 1) * sizeof *dir_start);
    char *line = 0, *prev = 0;
    size_t prev_dl = 0;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, m)) > 0) {
        char *tab = strrchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        if (nfiles == cap) {
            cap *= 2;
            files = realloc(files, cap * sizeof *files);
            dir_start = realloc(dir_start, (cap + 1) * sizeof *dir_start);
        }
        files[nfiles].path = strdup(line);
        files[nfiles].size = atol(tab + 1);
        char *s = strrchr(files[nfiles].path, '/');
        size_t dl = s ? (size_t)(s - files[nfiles].path) : 0;
        if (!prev || prev_dl != dl || strncmp(prev, files[nfiles].path, dl))
            dir_start[ndirs++] = nfiles;
        prev = files[nfiles].path;
        prev_dl = dl;
        nfiles++;
    }
    dir_start[ndirs] = nfiles;
    memset(data, 'x', sizeof data);
    root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) { perror(argv[2]); return 1; }
    nthreads = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 256) nthreads = 1;
    pthread_t th[256];
    for (long t = 0; t < nthreads; t++) pthread_create(&th[t], 0, work, (void *)t);
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], 0);
    return 0;
}
