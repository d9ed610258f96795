// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cthr_thread.h"

int cthr_thread_is_sleeping(pid_t tid, bool *sleeping) {
    if (sleeping == NULL) {
        return EINVAL;
    }
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    char buffer[512];
    ssize_t length;
    do {
        length = read(fd, buffer, sizeof buffer - 1);
    } while (length < 0 && errno == EINTR);
    int saved = errno;
    (void)close(fd);
    if (length <= 0) {
        return length < 0 ? saved : EIO;
    }
    buffer[length] = '\0';
    // "tid (comm) S ...": the name may hold spaces and parentheses, so the state follows the last ')'.
    char *end = strrchr(buffer, ')');
    if (end == NULL || end[1] != ' ' || end[2] == '\0') {
        return EIO;
    }
    *sleeping = end[2] == 'S' || end[2] == 'D';
    return 0;
}
