// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

// The Swift runtime's once-lock (`swift_once`, every global and static initializer) is a priority-inheritance
// futex whose word holds the owner's thread id, and each runtime library caches the calling thread's id in a
// thread-local (`ulock_get_tid()`, in libswiftCore and in libswift_Concurrency). A fork()ed child's first thread
// inherits the forking thread's cache, so it locks with the parent's id. Uncontended that goes unnoticed; if a
// thread the child started then waits for the same once-lock, the kernel queues it behind the parent's id, and the
// first thread's unlock is refused (EPERM) for ever: both threads spin or sleep, and the child hangs (seen: the
// first two threads of a child both initialising a global). Nothing in the runtime resets the cache at fork, so
// this file does, for the forking thread: the prepare handler finds the caches' addresses in that thread (in the
// parent, where looking is safe), and the child handler zeroes them, which makes the runtime ask the kernel again.
//
// Only the runtime's own once-lock caches are reset. `Synchronization.Mutex` keeps a cache of its own in every
// module that uses it, and a Mutex the forking thread holds across fork() can be unlocked in the child only with
// the parent's id, so resetting those would hang that pattern instead; Threading's locks handle fork themselves
// (see `cthr_lock_is_self`).
//
// The caches are local symbols, found in the libraries' symbol tables (`.symtab`) by name. A library without one
// (stripped) or a future runtime that renames the cache leaves nothing found: `cthr_fork_reset_thread_id_caches`
// then reports 0 in the child, and the test suite notices.

#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cthr_thread.h"

// The thread-local `tid` of `swift::threading_impl::linux::ulock_get_tid()`.
static const char cthr_fork_cache_symbol[] = "_ZZN5swift14threading_impl5linux13ulock_get_tidEvE3tid";

enum { CTHR_FORK_CACHES_MAX = 8 };

// A cache: its library's TLS module id and its offset in that module's TLS block. Found once (the first fork).
typedef struct cthr_fork_cache_site {
    size_t module;
    size_t offset;
} cthr_fork_cache_site_t;

static cthr_fork_cache_site_t cthr_fork_sites[CTHR_FORK_CACHES_MAX];
static size_t cthr_fork_site_count;
static pthread_once_t cthr_fork_sites_once = PTHREAD_ONCE_INIT;

// Between the prepare handler and the child handler (glibc runs the handlers of one fork under one lock): the
// forking thread's copies of the caches. In the child the same addresses hold the child's copies.
static int32_t *cthr_fork_slots[CTHR_FORK_CACHES_MAX];
static size_t cthr_fork_slot_count;
// In a child: how many caches its fork reset (for tests and diagnostics).
static size_t cthr_fork_reset_count;

// Adds the caches in the `.symtab` of the ELF file at `path` (a library with TLS module `module`). Every offset is
// bounds-checked: a file that is not what it claims adds nothing.
static void cthr_fork_scan_file(const char *path, size_t module) {
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return;
    struct stat info;
    if (fstat(descriptor, &info) != 0 || info.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(descriptor);
        return;
    }
    size_t size = (size_t)info.st_size;
    const unsigned char *file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    close(descriptor);
    if (file == MAP_FAILED) return;
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)file;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
        header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shoff > size ||
        (size - header->e_shoff) / sizeof(Elf64_Shdr) < header->e_shnum) {
        munmap((void *)file, size);
        return;
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file + header->e_shoff);
    for (size_t index = 0; index < header->e_shnum; index++) {
        const Elf64_Shdr *table = &sections[index];
        if (table->sh_type != SHT_SYMTAB || table->sh_link >= header->e_shnum) continue;
        const Elf64_Shdr *strings = &sections[table->sh_link];
        if (table->sh_offset > size || table->sh_size > size - table->sh_offset || strings->sh_offset > size ||
            strings->sh_size > size - strings->sh_offset)
            continue;
        const Elf64_Sym *symbols = (const Elf64_Sym *)(file + table->sh_offset);
        const char *names = (const char *)(file + strings->sh_offset);
        size_t count = table->sh_size / sizeof(Elf64_Sym);
        for (size_t symbol = 0; symbol < count && cthr_fork_site_count < CTHR_FORK_CACHES_MAX; symbol++) {
            const Elf64_Sym *entry = &symbols[symbol];
            if (ELF64_ST_TYPE(entry->st_info) != STT_TLS || entry->st_size != sizeof(int32_t)) continue;
            if (entry->st_name >= strings->sh_size ||
                strings->sh_size - entry->st_name < sizeof(cthr_fork_cache_symbol) ||
                memcmp(names + entry->st_name, cthr_fork_cache_symbol, sizeof(cthr_fork_cache_symbol)) != 0)
                continue;
            cthr_fork_sites[cthr_fork_site_count++] = (cthr_fork_cache_site_t){module, (size_t)entry->st_value};
        }
    }
    munmap((void *)file, size);
}

// dl_iterate_phdr callback: scans every loaded object with a TLS block whose name says it is a Swift runtime
// library, and the main program (a statically linked runtime lives there).
static int cthr_fork_scan_object(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size;
    (void)unused;
    if (info->dlpi_tls_modid == 0) return 0;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == '\0') {
        cthr_fork_scan_file("/proc/self/exe", info->dlpi_tls_modid);
    } else if (strstr(name, "/libswift") != NULL) {
        cthr_fork_scan_file(name, info->dlpi_tls_modid);
    }
    return 0;
}

static void cthr_fork_find_sites(void) { dl_iterate_phdr(cthr_fork_scan_object, NULL); }

// dl_iterate_phdr callback: records the calling thread's address of every cache in this object's TLS block
// (`dlpi_tls_data` is null when the thread has not touched the block: then its caches are still zero).
static int cthr_fork_locate_slots(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size;
    (void)unused;
    if (info->dlpi_tls_modid == 0 || info->dlpi_tls_data == NULL) return 0;
    for (size_t index = 0; index < cthr_fork_site_count; index++) {
        if (cthr_fork_sites[index].module != info->dlpi_tls_modid) continue;
        cthr_fork_slots[cthr_fork_slot_count++] =
            (int32_t *)((unsigned char *)info->dlpi_tls_data + cthr_fork_sites[index].offset);
    }
    return 0;
}

static void cthr_fork_prepare(void) {
    pthread_once(&cthr_fork_sites_once, cthr_fork_find_sites);
    cthr_fork_slot_count = 0;
    if (cthr_fork_site_count > 0) dl_iterate_phdr(cthr_fork_locate_slots, NULL);
}

// In the child (one thread, async-signal-safe): stores only.
static void cthr_fork_child(void) {
    for (size_t index = 0; index < cthr_fork_slot_count; index++) *cthr_fork_slots[index] = 0;
    cthr_fork_reset_count = cthr_fork_slot_count;
}

__attribute__((constructor)) static void cthr_fork_setup(void) {
    // If this fails (ENOMEM), a child keeps the stale caches: the hang above stays possible there.
    (void)pthread_atfork(cthr_fork_prepare, NULL, cthr_fork_child);
}

size_t cthr_fork_reset_thread_id_caches(void) { return cthr_fork_reset_count; }
