/*
 * host/loader.c - finding, loading and unloading plugins.
 *
 * A load opens the file with dlopen(RTLD_NOW | RTLD_LOCAL), looks up the
 * single entry symbol, negotiates the ABI version through the descriptor,
 * and runs setup() with its registrations staged; only a setup() that
 * succeeds publishes them.  Every attempt is recorded, so that a host can
 * show why a plugin is missing.  Loads and unloads are serialised by one
 * lock; calls never take it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BP_PLUGIN_DIR
#define BP_PLUGIN_DIR "/usr/local/lib/backplane/plugins"
#endif

static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;
static bp__plugin **plugins;
static size_t nplugins, plugins_cap;

bp__plugin bp__host_plugin = {
    .path = "(host)",
    .name = "host",
    .vendor = "Backplane",
    .version = BP_VERSION_STRING,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .origin = BP_ORIGIN_STATIC,
    .state = BP_PLUGIN_LOADED,
    .error = "",
    .host = &bp__host_api,
    .builtin = true,
};

BP_API const char *bp_plugin_dir(void) { return BP_PLUGIN_DIR; }

/* Runs a built-in plugin's setup() for the host's own registrations, as a
 * loaded plugin's runs: through the public host table, staged, and
 * published only if it succeeds. */
bp_status bp__builtin_setup(bp_status (*setup)(const bp_host_api *, bp_registrar *)) {
  static bp_registrar reg;
  bp__plugin *p = &bp__host_plugin;
  pthread_mutex_lock(&loader_lock);
  reg.plugin = p;
  reg.generation++;
  reg.active = true;
  p->registrar = &reg;
  p->loading = true;
  bp_status st = setup(&bp__host_api, &reg);
  reg.active = false;
  if (st) {
    bp__kernel *garbage = NULL;
    bp__registry_remove(p, &garbage);
    bp__registry_free_garbage(garbage);
    p->loading = false;
  } else {
    bp__registry_commit(p);
  }
  pthread_mutex_unlock(&loader_lock);
  return st;
}

static char *dup_or_empty(const char *s) { return bp__strdup(s ? s : ""); }

/* The record for `path` (or for `init`), created if new. */
static bp__plugin *record_for(const char *path, bp_plugin_init_fn init, const char *label,
                              int32_t origin) {
  for (size_t i = 0; i < nplugins; i++) {
    bp__plugin *p = plugins[i];
    if (init ? p->static_init == init : (p->static_init == NULL && strcmp(p->path, path) == 0))
      return p;
  }
  if (nplugins == plugins_cap) {
    size_t cap = plugins_cap ? plugins_cap * 2 : 16;
    bp__plugin **n = bp__realloc(plugins, cap * sizeof *n);
    if (!n) return NULL;
    plugins = n;
    plugins_cap = cap;
  }
  bp__plugin *p = bp__calloc(1, sizeof *p);
  if (!p) return NULL;
  p->path = bp__strdup(path);
  p->label = label ? bp__strdup(label) : NULL;
  p->error = bp__strdup("");
  if (!p->path || !p->error || (label && !p->label)) {
    bp__free(p->path);
    bp__free(p->label);
    bp__free(p->error);
    bp__free(p);
    return NULL;
  }
  p->static_init = init;
  p->origin = origin;
  p->host = &bp__host_api;
  p->state = BP_PLUGIN_FAILED;
  plugins[nplugins++] = p;
  return p;
}

/* A record's message when it could not be copied: static, never freed. */
static char no_memory[] = "out of memory (no room for this plugin's message)";

/* Replaces the record's message with a copy of msg. */
static void set_record_error(bp__plugin *p, const char *msg) {
  char *e = bp__strdup(msg);
  if (p->error != no_memory) bp__free(p->error);
  p->error = e ? e : no_memory;
}

/* Records the thread's current error as the plugin's failure. */
static bp_status fail(bp__plugin *p, bp_status st) {
  p->state = BP_PLUGIN_FAILED;
  p->status = st;
  set_record_error(p, bp_last_error());
  return st;
}

static const char *label_of(const bp__plugin *p) { return p->label ? p->label : p->path; }

static void clear_identity(bp__plugin *p) {
  bp__free(p->name);
  bp__free(p->vendor);
  bp__free(p->version);
  p->name = p->vendor = p->version = NULL;
  p->abi_major = p->abi_minor = p->op_set_version = 0;
  p->desc = NULL;
  p->desc_size = 0;
}

static bool valid_plugin_name(const char *s) {
  if (!s || !(*s >= 'a' && *s <= 'z')) return false;
  size_t n = 0;
  for (; s[n]; n++)
    if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')) return false;
  return n <= BP__PLUGIN_NAME_MAX;
}

/* Removes everything p registered, after making sure no call still runs in
 * it.  Its device types are forgotten only when `forget_devices`: a device
 * that still has tensors must keep its interface for their release. */
static void purge(bp__plugin *p, bool forget_devices) {
  bp__kernel *garbage = NULL;
  bp__device_hide_owner(p);
  bp__registry_remove(p, &garbage);
  bp__synchronize();
  bp__registry_free_garbage(garbage);
  if (forget_devices) bp__device_forget_owner(p);
}

/* Negotiates with the descriptor `init` returns and runs setup(). */
static bp_status attach(bp__plugin *p, bp_plugin_init_fn init) {
  const char *who = label_of(p);
  clear_identity(p);
  bp_clear_error();
  const bp_plugin_desc *d = init(&bp__host_api);
  if (!d) {
    const char *why = bp_last_status() != BP_OK ? bp_last_error() : "it gave no reason";
    return bp__error(BP_ERR_LOAD, "plugin '%s': bp_plugin_init refused to load: %s", who, why);
  }
  if (d->struct_size < BP_STRUCT_SIZE(bp_plugin_desc, abi_minor))
    return bp__error(BP_ERR_VERSION,
                     "plugin '%s': its descriptor's struct_size is %zu, too small to hold even the "
                     "ABI version (%zu bytes)", who, d->struct_size,
                     BP_STRUCT_SIZE(bp_plugin_desc, abi_minor));
  p->abi_major = d->abi_major;
  p->abi_minor = d->abi_minor;
  if (d->abi_major != BP_ABI_VERSION_MAJOR)
    return bp__error(BP_ERR_VERSION,
                     "plugin '%s' was built for Backplane ABI %u.%u, but this host implements ABI "
                     "%d.%d; the major versions must match", who, (unsigned)d->abi_major,
                     (unsigned)d->abi_minor, BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR);
  if (d->struct_size < BP_STRUCT_SIZE(bp_plugin_desc, setup))
    return bp__error(BP_ERR_VERSION,
                     "plugin '%s': its descriptor's struct_size is %zu, smaller than the %zu bytes "
                     "ABI %u.0 requires (through 'setup')", who, d->struct_size,
                     BP_STRUCT_SIZE(bp_plugin_desc, setup), (unsigned)d->abi_major);
  if (!valid_plugin_name(d->name))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': its name '%s' is not valid ([a-z][a-z0-9_]*, at most 64 characters)",
                     who, d->name ? d->name : "(null)");
  if (!d->setup) return bp__error(BP_ERR_LOAD, "plugin '%s': its descriptor's setup is NULL", who);
  for (size_t i = 0; i < nplugins; i++) {
    const bp__plugin *o = plugins[i];
    if (o != p && o->state == BP_PLUGIN_LOADED && o->name && strcmp(o->name, d->name) == 0)
      return bp__error(BP_ERR_ALREADY_EXISTS,
                       "plugin '%s': the name '%s' is already taken by the loaded plugin '%s'", who,
                       d->name, label_of(o));
  }
  if (strcmp(d->name, bp__host_plugin.name) == 0)
    return bp__error(BP_ERR_ALREADY_EXISTS, "plugin '%s': the name 'host' is reserved", who);
  p->name = bp__strdup(d->name);
  p->vendor = dup_or_empty(d->vendor);
  p->version = dup_or_empty(d->version);
  if (!p->name || !p->vendor || !p->version)
    return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': out of memory", who);
  p->op_set_version = d->op_set_version;
  p->desc = d;
  p->desc_size = d->struct_size;

  if (!p->registrar && !(p->registrar = bp__calloc(1, sizeof *p->registrar)))
    return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': out of memory", who);
  /* The registrar and its libraries outlive setup() (see internal.h). */
  bp_registrar *reg = p->registrar;
  reg->plugin = p;
  reg->generation++;
  reg->active = true;
  p->loading = true;
  bp_clear_error();
  bp_status st = d->setup(&bp__host_api, reg);
  reg->active = false;
  if (st != BP_OK) {
    st = bp__status_from_plugin((int)st, p->name);
    char why[800];
    snprintf(why, sizeof why, "%s",
             bp_last_status() != BP_OK ? bp_last_error() : "it gave no reason");
    const char *dev = NULL;
    bool live = bp__device_live_for_owner(p, &dev) > 0;
    /* If its own setup left tensors alive on its devices, it cannot be
     * closed safely: it stays mapped, with its devices hidden from new
     * tensors but able to free the ones that exist. */
    if (live) p->dl = NULL;
    purge(p, !live);
    p->loading = false;
    /* A registration's own message names the plugin already. */
    char self[160];
    int n = snprintf(self, sizeof self, "plugin '%s': ", p->name);
    const char *reason =
        n > 0 && (size_t)n < sizeof self && !strncmp(why, self, (size_t)n) ? why + n : why;
    return bp__error(st, "plugin '%s' (%s): setup failed: %s", p->name, who, reason);
  }
  bp__registry_commit(p);
  /* A note that setup() left with set_error(BP_OK, ...), such as why the
   * plugin found no devices, is kept as bp_plugin_info.error. */
  set_record_error(p, bp_last_status() == BP_OK ? bp_last_error() : "");
  return BP_OK;
}

static bool probing; /* in a probe's child (plugin_probe.c): no probe again */

static bp_status load_path(const char *path, int32_t origin, bool *newly, bp__plugin **out);

/* The probe's load, in its child. */
static void load_in_probe(const char *path) {
  probing = true;
  bool newly;
  bp__plugin *p;
  (void)load_path(path, BP_ORIGIN_EXPLICIT, &newly, &p);
}

static bp_status load_path(const char *path, int32_t origin, bool *newly, bp__plugin **out) {
  char canon[PATH_MAX];
  *newly = false;
  if (!realpath(path, canon)) {
    int e = errno;
    bp__plugin *p = record_for(path, NULL, NULL, origin);
    bp_status st = bp__error(BP_ERR_LOAD, "plugin '%s': cannot open: %s", path, strerror(e));
    return p ? fail(p, st) : st;
  }
  bp__plugin *p = record_for(canon, NULL, NULL, origin);
  if (!p) return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': out of memory", canon);
  if (p->state == BP_PLUGIN_LOADED) {
    *out = p;
    return BP_OK;
  }
  bp_status chk = bp__plugin_file_check(canon);
  if (!chk && !probing) chk = bp__plugin_probe(canon, load_in_probe);
  if (chk) return fail(p, chk);
  dlerror();
  void *dl = dlopen(canon, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *e = dlerror();
    return fail(p, bp__error(BP_ERR_LOAD, "plugin '%s': dlopen failed: %s", canon, e ? e : "unknown error"));
  }
  bp_plugin_init_fn init = (bp_plugin_init_fn)(uintptr_t)dlsym(dl, BP_PLUGIN_ENTRY_SYMBOL);
  if (!init) {
    dlclose(dl);
    return fail(p, bp__error(BP_ERR_LOAD,
                             "plugin '%s': it does not export '%s', so it is not a Backplane plugin",
                             canon, BP_PLUGIN_ENTRY_SYMBOL));
  }
  p->dl = dl;
  bp_status st = attach(p, init);
  if (st) {
    if (p->dl) dlclose(p->dl);
    p->dl = NULL;
    return fail(p, st);
  }
  p->state = BP_PLUGIN_LOADED;
  p->status = BP_OK;
  *newly = true;
  *out = p;
  return BP_OK;
}

bp_status bp__plugin_load(const char *path, bp_plugin **out_plugin) {
  if (!path || !*path)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_plugin_load: path is %s", path ? "empty" : "NULL");
  bp__plugin *p = NULL;
  bool newly;
  pthread_mutex_lock(&loader_lock);
  bp_status st = load_path(path, BP_ORIGIN_EXPLICIT, &newly, &p);
  pthread_mutex_unlock(&loader_lock);
  if (!st && out_plugin) *out_plugin = p;
  return st;
}

bp_status bp__plugin_register(bp_plugin_init_fn init, const char *label,
                              bp_plugin **out_plugin) {
  if (!init) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_plugin_register: init is NULL");
  char buf[256];
  snprintf(buf, sizeof buf, "%s", label ? label : "(static)");
  pthread_mutex_lock(&loader_lock);
  bp__plugin *p = record_for("(static)", init, buf, BP_ORIGIN_STATIC);
  bp_status st = BP_OK;
  if (!p) {
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "bp_plugin_register: out of memory");
  } else if (p->state != BP_PLUGIN_LOADED) {
    st = attach(p, init);
    if (st) {
      fail(p, st);
    } else {
      p->state = BP_PLUGIN_LOADED;
      p->status = BP_OK;
    }
  }
  pthread_mutex_unlock(&loader_lock);
  if (!st && out_plugin) *out_plugin = p;
  return st;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every "*.so" in dir, in name order.  Each plugin's failure is
 * kept in its record; only a failure to list the directory (no memory for
 * its names) is returned. */
static bp_status scan_dir(const char *dir, int32_t origin, size_t *loaded) {
  DIR *d = opendir(dir);
  if (!d) return BP_OK;
  char **names = NULL;
  size_t n = 0, cap = 0;
  bool oom = false;
  struct dirent *e;
  while (!oom && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 16;
      char **nn = bp__realloc(names, ncap * sizeof *nn);
      if (!nn) {
        oom = true;
        break;
      }
      names = nn;
      cap = ncap;
    }
    if (!(names[n] = bp__strdup(e->d_name))) oom = true;
    else n++;
  }
  closedir(d);
  if (!oom) {
    if (n > 1) qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
      char path[PATH_MAX];
      if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) < sizeof path) {
        bp__plugin *p;
        bool newly;
        if (load_path(path, origin, &newly, &p) == BP_OK && newly) (*loaded)++;
      }
    }
  }
  for (size_t i = 0; i < n; i++) bp__free(names[i]);
  bp__free(names);
  return oom ? bp__error(BP_ERR_OUT_OF_MEMORY,
                         "bp_plugin_discover: out of memory listing %s; none of its plugins "
                         "were loaded", dir)
             : BP_OK;
}

/* BP_PLUGIN_PATH must not steer a setuid or setgid program into loading
 * code of the caller's choosing. */
const char *bp__plugin_path_env(void) {
  if (getuid() != geteuid() || getgid() != getegid()) return NULL;
#ifdef HAVE_SECURE_GETENV
  return secure_getenv("BP_PLUGIN_PATH");
#else
  return getenv("BP_PLUGIN_PATH");
#endif
}

bp_status bp__plugin_discover(size_t *out_loaded) {
  size_t loaded = 0;
  pthread_mutex_lock(&loader_lock);
  bp_status st = BP_OK;
  const char *env = bp__plugin_path_env();
  if (env && *env) {
    char *copy = bp__strdup(env);
    if (!copy) {
      pthread_mutex_unlock(&loader_lock);
      return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_plugin_discover: out of memory");
    }
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir && !st; dir = strtok_r(NULL, ":", &save))
      if (*dir) st = scan_dir(dir, BP_ORIGIN_ENV, &loaded);
    bp__free(copy);
  }
  if (!st) st = scan_dir(BP_PLUGIN_DIR, BP_ORIGIN_INSTALLED, &loaded);
  pthread_mutex_unlock(&loader_lock);
  /* A plugin that failed says why in its record, not here. */
  if (!st) bp_clear_error();
  if (out_loaded) *out_loaded = loaded;
  return st;
}

BP_API bp_status bp_plugin_unload(bp_plugin *p) {
  if (!p) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_plugin_unload: plugin is NULL");
  if (p == &bp__host_plugin)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_plugin_unload: the host's own registrations cannot be unloaded");
  if (bp__in_read_section())
    return bp__error(BP_ERR_BUSY, "plugin '%s': cannot unload from inside a call", label_of(p));
  pthread_mutex_lock(&loader_lock);
  bp_status st = BP_OK;
  const char *dev = NULL;
  int64_t live;
  if (p->state != BP_PLUGIN_LOADED) {
    st = bp__error(BP_ERR_NOT_FOUND, "plugin '%s' is not loaded", label_of(p));
  } else if ((live = bp__device_live_for_owner(p, &dev)) > 0) {
    st = bp__error(BP_ERR_BUSY, "plugin '%s': %lld tensor%s on its device type '%s' still alive",
                   p->name, (long long)live, live == 1 ? " is" : "s are", dev);
  } else if ((live = bp__device_handles_for_owner(p, &dev)) > 0) {
    st = bp__error(BP_ERR_BUSY, "plugin '%s': %lld stream%s or event%s on its device type '%s' "
                   "still alive (destroy them first)", p->name, (long long)live,
                   live == 1 ? "" : "s", live == 1 ? "" : "s", dev);
  } else {
    /* Stop new allocations and device calls, let running ones finish, and
     * look again: a tensor, stream or event created in between keeps the
     * plugin. */
    bp__device_hide_owner(p);
    bp__synchronize();
    if ((live = bp__device_live_for_owner(p, &dev)) > 0) {
      bp__device_restore_owner(p);
      st = bp__error(BP_ERR_BUSY, "plugin '%s': %lld tensor%s on its device type '%s' still alive",
                     p->name, (long long)live, live == 1 ? " is" : "s are", dev);
    } else if ((live = bp__device_handles_for_owner(p, &dev)) > 0) {
      bp__device_restore_owner(p);
      st = bp__error(BP_ERR_BUSY, "plugin '%s': %lld stream%s or event%s on its device type '%s' "
                     "still alive (destroy them first)", p->name, (long long)live,
                     live == 1 ? "" : "s", live == 1 ? "" : "s", dev);
    }
  }
  if (st) {
    pthread_mutex_unlock(&loader_lock);
    return st;
  }
  purge(p, true);
  if (p->desc && p->desc_size >= BP_STRUCT_SIZE(bp_plugin_desc, teardown) && p->desc->teardown)
    p->desc->teardown(&bp__host_api);
  if (p->dl) dlclose(p->dl);
  p->dl = NULL;
  p->desc = NULL;
  p->state = BP_PLUGIN_UNLOADED;
  /* What the allocation guard keeps for reuse goes too: an unload leaves
   * no memory mapped for it (bp-certify's teardown/unload counts). */
  bp__device_release_kept();
  pthread_mutex_unlock(&loader_lock);
  return BP_OK;
}

BP_API size_t bp_plugin_count(void) {
  pthread_mutex_lock(&loader_lock);
  size_t n = nplugins;
  pthread_mutex_unlock(&loader_lock);
  return n;
}

BP_API bp_plugin *bp_plugin_at(size_t index) {
  pthread_mutex_lock(&loader_lock);
  bp_plugin *p = index < nplugins ? plugins[index] : NULL;
  pthread_mutex_unlock(&loader_lock);
  return p;
}

BP_API bp_status bp_plugin_get_info(const bp_plugin *p, bp_plugin_info *out) {
  if (!p || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_plugin_get_info: %s is NULL", !p ? "plugin" : "out_info");
  if (out->struct_size < BP_STRUCT_SIZE(bp_plugin_info, path))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "bp_plugin_get_info: out_info->struct_size is %zu (set it to "
                     "BP_PLUGIN_INFO_STRUCT_SIZE)", out->struct_size);
  bp_plugin_info info;
  memset(&info, 0, sizeof info);
  pthread_mutex_lock(&loader_lock);
  info.path = p->path;
  info.name = p->name;
  info.vendor = p->vendor;
  info.version = p->version;
  info.abi_major = p->abi_major;
  info.abi_minor = p->abi_minor;
  info.op_set_version = p->op_set_version;
  info.origin = p->origin;
  info.state = p->state;
  info.status = p->status;
  info.error = p->error;
  pthread_mutex_unlock(&loader_lock);
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = n;
  memcpy(out, &info, n);
  return BP_OK;
}
