/*
 * conformance/ipc.c - the channel between the parent and its children
 * (ipc.h): writing a whole message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "ipc.h"

/* Writes all of buf to the socket or pipe fd; false once the other end is
 * gone (without SIGPIPE on a socket). */
bool cert_send_all(int fd, const char *buf, size_t n) {
  while (n) {
    ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    buf += w;
    n -= (size_t)w;
  }
  return true;
}
