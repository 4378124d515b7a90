/*
 * conformance/ipc.h - what the parent and its children say to each other.
 *
 * A case reports "<status>\n<detail>\n", the status one of status_name[]
 * (verdict.c).  A worker says IPC_READY once it has loaded the plugin, or
 * IPC_NOLOAD and a line with the reason when it cannot; the parent then
 * sends it case indexes, one "<index>\n" at a time, and the worker ends
 * each case with IPC_DONE.  (The probe has a line format of its own:
 * probe.c.)
 */
#ifndef BP_CONFORMANCE_IPC_H
#define BP_CONFORMANCE_IPC_H

/* A verdict's status; its name is the first line of a case's record. */
enum status { ST_PASS, ST_FAIL, ST_SKIP, ST_CRASH, ST_TIMEOUT };
extern const char *const cert_status_name[];

/* The worker's words, each a line of its own. */
#define IPC_READY "ready\n"   /* the plugin is loaded: send cases */
#define IPC_NOLOAD "noload\n" /* it is not; the next line says why */
#define IPC_DONE "done\n"     /* the case's verdict has been sent */
/* The length of one of the words above, its newline included. */
#define IPC_LEN(word) (sizeof word - 1)

#include <stdbool.h>
#include <stddef.h>

/* Writes all of buf to the socket or pipe fd; false once the other end is
 * gone (without SIGPIPE on a socket).  (ipc.c) */
bool cert_send_all(int fd, const char *buf, size_t n);

#endif /* BP_CONFORMANCE_IPC_H */
