/* A static program for hostile Docker builds and images (no shell needed: RUN ["/tool", ...]).
 *
 *   tool fork N         fork up to N children that wait; print how many, and why it stopped
 *   tool alloc MB       allocate and touch MB mebibytes, 16 at a time, printing progress
 *   tool sleep MARKER   sleep forever (MARKER only tags the command line)
 *   tool id [fail]      print the real and effective uid and gid (then exit 1 with "fail")
 *   tool fill DIR MB    write up to MB mebibytes into DIR/fill, copy itself to DIR/tool and
 *                       try to run that copy; print what happened, on stderr
 *
 * Every report goes to stdout (build steps) or stderr (fill, for seats) and is flushed at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fork_children(long limit) {
    long forked = 0;
    for (; forked < limit; forked++) {
        pid_t pid = fork();
        if (pid < 0) {
            printf("forked %ld then: %s\n", forked, strerror(errno));
            fflush(stdout);
            return 1;
        }
        if (pid == 0) {
            pause();
            _exit(0);
        }
    }
    printf("forked %ld\n", forked);
    fflush(stdout);
    return 0;
}

static int allocate(long mebibytes) {
    for (long done = 16; done <= mebibytes; done += 16) {
        char *block = malloc(16 << 20);
        if (block == NULL) {
            printf("malloc failed at %ld MB\n", done);
            fflush(stdout);
            return 1;
        }
        memset(block, 1, 16 << 20);
        printf("allocated %ld MB\n", done);
        fflush(stdout);
    }
    return 0;
}

static int fill(const char *dir, long mebibytes) {
    static char block[1 << 20];
    char path[4096];
    memset(block, 'x', sizeof block);
    snprintf(path, sizeof path, "%s/fill", dir);
    long written = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "fill: cannot create %s: %s\n", path, strerror(errno));
    } else {
        for (; written < mebibytes; written++) {
            if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
                fprintf(stderr, "fill: stopped: %s\n", strerror(errno));
                break;
            }
        }
        close(fd);
        unlink(path);
    }
    fprintf(stderr, "fill: wrote %ld MB\n", written);
    snprintf(path, sizeof path, "%s/tool", dir);
    int in = open("/proc/self/exe", O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ssize_t got;
    while (in >= 0 && out >= 0 && (got = read(in, block, sizeof block)) > 0) {
        if (write(out, block, got) != got) break;
    }
    if (out >= 0) close(out);
    if (in >= 0) close(in);
    chmod(path, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = {path, "id", NULL};
        execv(path, args);
        fprintf(stderr, "exec: %s\n", strerror(errno));
        fflush(stderr);
        _exit(3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) fprintf(stderr, "exec: ran\n");
    fflush(stderr);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "fork") == 0) return fork_children(atol(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "alloc") == 0) return allocate(atol(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "sleep") == 0) {
        for (;;) pause();
    }
    if (argc >= 2 && strcmp(argv[1], "id") == 0) {
        printf("uid=%d euid=%d gid=%d egid=%d\n", (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
        fflush(stdout);
        return argc >= 3 ? 1 : 0;
    }
    if (argc >= 4 && strcmp(argv[1], "fill") == 0) return fill(argv[2], atol(argv[3]));
    fprintf(stderr, "usage: tool fork N | alloc MB | sleep MARKER | id [fail] | fill DIR MB\n");
    return 2;
}
