/*
 * confine runner plugin ABI.
 *
 * This is the whole contract between the confine host (libconfine) and a runner
 * plugin: plain C structs and function pointers, UTF-8 NUL-terminated strings. It is
 * C11 (anonymous unions keep older field names) and C++.
 * Plugins built by other compilers, against other standard libraries, keep working
 * across host releases of the same major version.
 *
 * A plugin is a shared object named `confine-runner-<name>.so` (`.dylib`, `.dll`)
 * that exports two data symbols:
 *
 *   const confine_plugin_abi_info confine_plugin_abi;   -- read first, before any
 *                                                           plugin code is called
 *   const confine_plugin_descriptor confine_plugin;     -- entry points
 *
 * Versioning rules:
 *   - the host refuses a plugin whose `major` differs from CONFINE_ABI_MAJOR;
 *   - the host refuses a plugin whose `minor` is newer than its own;
 *   - every struct starts with `struct_size`. A minor version only appends fields;
 *     a reader uses a field only when `struct_size` covers it. The descriptor's
 *     size must be exactly the one defined for the plugin's declared minor.
 *
 * Ownership: strings and results a plugin returns are freed by the plugin's own
 * free functions; results the host returns are freed by the host's release
 * functions. No exception may cross this boundary: a C++ plugin catches everything
 * (the SDK in `confine/sdk/plugin.hpp` does it for you). The host catches what
 * unwinds into it where the C++ runtimes allow; a plugin with a private runtime
 * (static, symbols hidden) that lets an exception escape terminates its host.
 *
 * Error codes and enumerators are append-only.
 */
#ifndef CONFINE_PLUGIN_ABI_H
#define CONFINE_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONFINE_ABI_MAJOR 1
#define CONFINE_ABI_MINOR 13
/* "CNFN": guards against a shared object that merely happens to export the name. */
#define CONFINE_ABI_MAGIC 0x434E464Eu

#define CONFINE_PLUGIN_ABI_SYMBOL "confine_plugin_abi"
#define CONFINE_PLUGIN_DESCRIPTOR_SYMBOL "confine_plugin"

#if defined(_WIN32)
#define CONFINE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CONFINE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Marks a field kept only under an older name (the same storage as its new one). */
#if defined(__GNUC__) || defined(__clang__)
#define CONFINE_DEPRECATED_FIELD(why) __attribute__((deprecated(why)))
#elif defined(_MSC_VER)
#define CONFINE_DEPRECATED_FIELD(why) __declspec(deprecated(why))
#else
#define CONFINE_DEPRECATED_FIELD(why)
#endif

/* Status codes returned by entry points (append-only). */
typedef int32_t confine_status;
#define CONFINE_OK 0
#define CONFINE_E_INVALID_ARGUMENT 1 /* bad settings or policy: the caller's fault */
#define CONFINE_E_UNSUPPORTED 2      /* the runner cannot do this (yet, or here) */
#define CONFINE_E_FAILED 3           /* anything else that went wrong */
#define CONFINE_E_NO_MEMORY 4
#define CONFINE_E_INTERNAL 5 /* the plugin caught an unexpected exception */

/* Policy modes. */
#define CONFINE_MODE_READ_ONLY 0
#define CONFINE_MODE_WORKSPACE_WRITE 1

/* Network policies (confine_policy.network, ABI 1.5). */
#define CONFINE_NETWORK_NONE 0  /* no socket reaches anything outside the sandbox */
#define CONFINE_NETWORK_ALLOW 1 /* the network is not confined */
/* ABI 1.11: as NONE, but for TCP to the run's proxy at confine_policy.proxy_port on the
 * loopback the command sees (docs/design.md §12). A host asks it only of a plugin of 1.11
 * or later; a runner that cannot give it returns CONFINE_E_UNSUPPORTED. */
#define CONFINE_NETWORK_PROXY 2

/* Which /tmp the command gets (confine_policy.tmp, confine_wrap_result.tmp; ABI 1.6).
 * In a policy, UNSAID accepts either; in a result, UNSAID is a plugin that does not say
 * (older than 1.6), which a policy that asks for one kind refuses. */
#define CONFINE_TMP_UNSAID 0
#define CONFINE_TMP_PRIVATE 1 /* the run's own, empty at its start and gone after it */
#define CONFINE_TMP_HOST 2    /* the host's /tmp (writable in workspace-write mode) */

/* With the network none, whether the command has a loopback of its own
 * (confine_wrap_result.loopback; ABI 1.13). UNSAID: the network is not none, or the
 * plugin does not say (older than 1.13). */
#define CONFINE_LOOPBACK_UNSAID 0
#define CONFINE_LOOPBACK_NONE 1 /* no TCP or UDP socket at all, the loopback's neither */
#define CONFINE_LOOPBACK_OWN 2  /* a network namespace's own loopback, usable by the command alone */

/* How much of one dimension of the policy a wrap enforces (ABI 1.5). 0: not said, which
 * the host reads as a plugin older than 1.5 would mean it: write as `enforcement`,
 * network and processes none. */
#define CONFINE_LEVEL_UNSAID 0
#define CONFINE_LEVEL_NONE 1
#define CONFINE_LEVEL_PARTIAL 2
#define CONFINE_LEVEL_FULL 3

/* Probe verdicts. */
#define CONFINE_VERDICT_UNUSABLE 0
#define CONFINE_VERDICT_FULL 1
#define CONFINE_VERDICT_PARTIAL 2

/* Enforcement a wrap delivers. */
#define CONFINE_ENFORCEMENT_FULL 1
#define CONFINE_ENFORCEMENT_PARTIAL 2

/* How the host can learn, out of band, that the runner reached the command
 * (confine_wrap_result.attestation, ABI 1.1). */
#define CONFINE_ATTESTATION_NONE 0 /* it cannot: outcomes are judged by the failure rule */
/* The runner process reaches the command by its own execve: the command is its
 * attestation_exec_index-th successful execve, counting the runner's own as 1 (a
 * launcher that sets up confinement and then calls execvp on the command: 2). The
 * host observes the execs through the kernel (ptrace), where the command cannot
 * forge them, and lets the process go at the command's exec. That exec must run
 * the command's own file (the one the host resolved, by device and inode; for a
 * script, the script the exec named): otherwise the host ends the runner there and
 * the run fails closed, naming the declared exec and the one that ran the command's
 * file (docs/design.md §6). Not for set-user-ID runners: a traced exec does not gain
 * privileges. */
#define CONFINE_ATTESTATION_EXEC 1
/* The runner reports on a status descriptor that the host opens for it (for example
 * bubblewrap's --json-status-fd): argv[attestation_status_argument] is a placeholder,
 * before the "--", that the host replaces with the descriptor's number. The command
 * ran confined if and only if a line the runner wrote there contains
 * attestation_status_marker. The runner must keep the descriptor from the command.
 * ABI 1.3. Since ABI 1.4 the runner may also name, in attestation_status_pid_key, the
 * key after which it writes the command's process ID there (bubblewrap: "child-pid");
 * the host then passes the signals it forwards to the command itself, not to the
 * runner, once it has checked that the process is the runner's child. */
#define CONFINE_ATTESTATION_STATUS_FD 2

/* Log levels for confine_host.log. */
#define CONFINE_LOG_DEBUG 0
#define CONFINE_LOG_INFO 1
#define CONFINE_LOG_WARN 2
#define CONFINE_LOG_ERROR 3

/* Kinds of a runner setting value (from `[runner.<name>]` in confine.toml). */
#define CONFINE_SETTING_STRING 0
#define CONFINE_SETTING_INTEGER 1
#define CONFINE_SETTING_BOOLEAN 2
#define CONFINE_SETTING_STRING_ARRAY 3

typedef struct confine_string_list {
    const char* const* items;
    size_t count;
} confine_string_list;

typedef struct confine_setting {
    const char* key;
    int32_t kind;                    /* CONFINE_SETTING_* */
    const char* string_value;        /* STRING */
    int64_t integer_value;           /* INTEGER */
    int32_t boolean_value;           /* BOOLEAN: 0 or 1 */
    confine_string_list array_value; /* STRING_ARRAY */
} confine_setting;

/* What the host's run_probe service observed. Filled by the host, released with
 * confine_host.release_probe_run. */
typedef struct confine_probe_run {
    uint32_t struct_size;
    int32_t spawned;     /* 1 when the program was started */
    int32_t spawn_errno; /* errno of the failed start when spawned == 0 */
    int32_t exited;      /* 1 when it exited normally: exit_code is valid */
    int32_t exit_code;
    int32_t signal;    /* the terminating signal when it did not exit normally */
    int32_t timed_out; /* 1 when the time limit killed its whole process group */
    const char* stdout_data; /* captured, at most 64 KiB, NUL-terminated */
    size_t stdout_size;
    const char* stderr_data;
    size_t stderr_size;
} confine_probe_run;

/* Services the host hands to a plugin. Valid from create() until destroy(). */
typedef struct confine_host {
    uint32_t struct_size;
    uint16_t abi_major;
    uint16_t abi_minor;
    void* context; /* pass back as the first argument of every service */
    /* One line to the host's log, attributed to the runner. */
    void (*log)(void* context, int32_t level, const char* message);
    /* Run argv (argv[0] an absolute path or a name looked up on PATH) with stdin on
     * /dev/null and stdout/stderr captured, in its own process group. After
     * timeout_ms the whole group is killed and `timed_out` is set. The host may
     * shorten timeout_ms to what remains of the probe's own time limit. */
    confine_status (*run_probe)(void* context, const char* const* argv, size_t argc,
                                uint32_t timeout_ms, confine_probe_run* out);
    void (*release_probe_run)(void* context, confine_probe_run* run);
    /* Resolve a path to its canonical form (symlinks, "." and ".." resolved). The
     * path must exist. On failure *out_error describes why. Both strings are freed
     * with free_string. */
    confine_status (*canonicalize_path)(void* context, const char* path, char** out_path,
                                        char** out_error);
    void (*free_string)(void* context, char* string);
    /* ABI 1.9: names the `[runner.<name>]` key (one of confine_runner_config.settings)
     * that the error create() is about to return is about, so that the host reports the
     * error at that key's place in its configuration file. Call it, at most once, before
     * returning the error. Present only when struct_size covers it. */
    void (*setting_at_fault)(void* context, const char* key);
} confine_host;

/* What the host tells a runner when it creates it. */
typedef struct confine_runner_config {
    uint32_t struct_size;
    const char* runner_name;
    const char* plugin_dir; /* the directory the plugin file was loaded from */
    const confine_setting* settings;
    size_t settings_count;
} confine_runner_config;

/* The policy of one call. Paths are absolute. */
typedef struct confine_policy {
    uint32_t struct_size;
    int32_t mode;          /* CONFINE_MODE_* */
    const char* workspace; /* NULL in read-only mode */
    confine_string_list writable;
    /* ABI 1.5: CONFINE_NETWORK_*. A host older than 1.5 passes a policy without it
     * and confines no network: read it only when struct_size covers it. A host of 1.5
     * or later refuses to wrap with CONFINE_NETWORK_NONE through a plugin older than
     * 1.5, which would not know it was asked. */
    int32_t network;
    /* ABI 1.6: CONFINE_TMP_*, which /tmp the policy asks for (UNSAID: either). Read it
     * only when struct_size covers it; a host older than 1.6 asks for neither. */
    int32_t tmp;
    /* ABI 1.6: nonzero when the command's standard descriptors include the caller's
     * terminal (a foreground run at a terminal): the runner may grant access to that
     * terminal (the Landlock runner: its device and /dev/tty). Zero: no terminal is the
     * command's, and none is granted. 2: the command's terminal is a pseudo-terminal of
     * the run's own, its controlling terminal, and the caller's is none of its
     * descriptors (a runner grants /dev/tty only; one that reads this field as nonzero
     * alone grants what 1 would). */
    int32_t terminal;
    /* ABI 1.7: paths the command may neither read nor list (a directory: nothing beneath
     * it), and paths inside writable roots that stay read-only (nothing beneath them may
     * be written, renamed or removed, nor they themselves). Canonical, existing; none is
     * an ancestor of a writable root. Read them only when struct_size covers them; a
     * runner reports what it enforces of them as read_level and protect_level. */
    confine_string_list deny_read;
    confine_string_list protect;
    /* ABI 1.8: the directory the command will run in, canonical and existing: the host's
     * current directory unless its caller names another (NULL only when the host cannot
     * tell). In read-only mode it is the one place the policy names, so a runner under
     * which the command can read nothing it is not granted (AppContainer) grants read on
     * it. Read it only when struct_size covers it. */
    const char* working_directory;
    /* ABI 1.11: with CONFINE_NETWORK_PROXY, the TCP port of the run's proxy on 127.0.0.1
     * as the command sees it; 0 otherwise. Read it only when struct_size covers it. */
    uint32_t proxy_port;
    /* ABI 1.12: scoped reads. Empty: the command may read everything but deny_read. Not
     * empty: the only places it may read (canonical, existing, none beneath another):
     * the system's directories, the writable roots, where it runs, the read roots;
     * deny_read still applies within them. A runner says what it enforces of it as
     * read_scope_level; one that says nothing of it (UNSAID) is given the scope again as
     * deny_read entries by the host. Read it only when struct_size covers it. */
    confine_string_list read_scope;
} confine_policy;

/* Size of a confine_policy from an ABI 1.0-1.4 / 1.5 / 1.6 / 1.7 / 1.8-1.10 / 1.11 host
 * (1.12 and later: sizeof(confine_policy)). A runner reads a field only when struct_size covers it. */
#define CONFINE_POLICY_SIZE_1_0 (offsetof(confine_policy, network))
#define CONFINE_POLICY_SIZE_1_5 (offsetof(confine_policy, tmp))
#define CONFINE_POLICY_SIZE_1_6 (offsetof(confine_policy, deny_read))
#define CONFINE_POLICY_SIZE_1_7 (offsetof(confine_policy, working_directory))
#define CONFINE_POLICY_SIZE_1_8 (offsetof(confine_policy, proxy_port))
#define CONFINE_POLICY_SIZE_1_11 (offsetof(confine_policy, read_scope))

typedef struct confine_verdict {
    uint32_t struct_size;
    int32_t kind;       /* CONFINE_VERDICT_* */
    const char* reason; /* why unusable, or a note for usable verdicts; may be "" */
} confine_verdict;

/* How to recognise the runner's own failure (design.md §5). */
typedef struct confine_failure_rule {
    uint32_t struct_size;
    /* The exit statuses at which a fatal line is evidence of the runner's own failure;
     * none: a fatal line is evidence at any status (exit 0 and a death by signal never
     * are). Not statuses that are fine: a status outside them makes no line evidence.
     * Before 1.9 the fields were called allowed_exit_codes and allowed_exit_codes_count;
     * those names remain as deprecated aliases of the same storage. */
    union {
        const int32_t* evidence_exit_codes;
        CONFINE_DEPRECATED_FIELD("use evidence_exit_codes") const int32_t* allowed_exit_codes;
    };
    union {
        size_t evidence_exit_codes_count;
        CONFINE_DEPRECATED_FIELD("use evidence_exit_codes_count") size_t allowed_exit_codes_count;
    };
    confine_string_list fatal_signatures;    /* case-insensitive, per stderr line */
    confine_string_list informational_lines; /* exact whole lines, never evidence */
} confine_failure_rule;

typedef struct confine_wrap_result {
    uint32_t struct_size;
    confine_string_list argv; /* runner argv + "--" + the caller's argv */
    int32_t enforcement;      /* CONFINE_ENFORCEMENT_* */
    confine_string_list denial_signatures;
    confine_failure_rule failure_rule;
    /* ABI 1.1: read only when struct_size covers them; absent means NONE. */
    int32_t attestation;             /* CONFINE_ATTESTATION_* */
    uint32_t attestation_exec_index; /* for CONFINE_ATTESTATION_EXEC */
    /* ABI 1.2: confinement the host may apply to a process of its own (a child between
     * fork and exec, or itself before exec) instead of running `argv`'s runner: it then
     * executes the command after "--" directly. NULL when the runner has none. The call
     * must enforce exactly what the runner argv enforces, be async-signal-safe and
     * allocate nothing. It returns 0 once the calling process is confined; otherwise it
     * writes one line (no newline, NUL-terminated, at most error_size bytes) saying why.
     * The state belongs to the result and goes with free_wrap_result. */
    int32_t (*in_process_apply)(void* state, char* error, size_t error_size);
    void* in_process_state;
    /* ABI 1.3: for CONFINE_ATTESTATION_STATUS_FD. */
    uint32_t attestation_status_argument;
    const char* attestation_status_marker;
    /* ABI 1.4: for CONFINE_ATTESTATION_STATUS_FD; NULL when the runner reports no
     * process ID. In the status text, the key is followed by the decimal process ID,
     * with nothing but spaces, quotes, ':' or '=' between them. */
    const char* attestation_status_pid_key;
    /* ABI 1.5: what the wrap enforces of each dimension of the policy (CONFINE_LEVEL_*),
     * and, for each below full, what is left open (UTF-8, may be NULL). */
    int32_t write_level;
    int32_t network_level;
    int32_t processes_level;
    const char* dimensions_open;
    /* ABI 1.6: CONFINE_TMP_*, which /tmp the command gets. */
    int32_t tmp;
    /* ABI 1.7: what the wrap enforces of the policy's deny_read and protect
     * (CONFINE_LEVEL_*; UNSAID is read as NONE). What is left open goes in
     * dimensions_open. */
    int32_t read_level;
    int32_t protect_level;
    /* ABI 1.10: what the runner's own mechanism guarantees of the run's lifetime
     * (CONFINE_LEVEL_*; UNSAID is read as NONE): FULL when no process the command starts
     * can outlive the runner's process, whatever it does (a PID namespace whose init is
     * that process or dies with it). The host supervises the run itself and reports the
     * higher of the two. */
    int32_t lifetime_level;
    /* ABI 1.12: what the wrap enforces of the policy's read_scope (CONFINE_LEVEL_*).
     * UNSAID: the runner did not apply it, and the host wraps again with the scope given
     * as deny_read entries. */
    int32_t read_scope_level;
    /* ABI 1.13: CONFINE_LOOPBACK_*, with the network none whether the command has a
     * loopback of its own. */
    int32_t loopback;
} confine_wrap_result;

/* Size of a confine_wrap_result from an ABI 1.0 / 1.1 / 1.2 / 1.3 / 1.4 / 1.5 / 1.6 / 1.7-1.9 /
 * 1.10-1.11 / 1.12 plugin. */
#define CONFINE_WRAP_RESULT_SIZE_1_0 (offsetof(confine_wrap_result, attestation))
#define CONFINE_WRAP_RESULT_SIZE_1_1 (offsetof(confine_wrap_result, in_process_apply))
#define CONFINE_WRAP_RESULT_SIZE_1_2 (offsetof(confine_wrap_result, attestation_status_argument))
#define CONFINE_WRAP_RESULT_SIZE_1_3 (offsetof(confine_wrap_result, attestation_status_pid_key))
#define CONFINE_WRAP_RESULT_SIZE_1_4 (offsetof(confine_wrap_result, write_level))
#define CONFINE_WRAP_RESULT_SIZE_1_5 (offsetof(confine_wrap_result, tmp))
#define CONFINE_WRAP_RESULT_SIZE_1_6 (offsetof(confine_wrap_result, read_level))
#define CONFINE_WRAP_RESULT_SIZE_1_9 (offsetof(confine_wrap_result, lifetime_level))
#define CONFINE_WRAP_RESULT_SIZE_1_11 (offsetof(confine_wrap_result, read_scope_level))
#define CONFINE_WRAP_RESULT_SIZE_1_12 (offsetof(confine_wrap_result, loopback))

/* Exported as `confine_plugin_abi`. Plain data: the host reads it before it
 * calls any plugin code. */
typedef struct confine_plugin_abi_info {
    uint32_t magic;           /* CONFINE_ABI_MAGIC */
    uint16_t major;           /* CONFINE_ABI_MAJOR the plugin was built with */
    uint16_t minor;           /* CONFINE_ABI_MINOR the plugin was built with */
    uint32_t descriptor_size; /* sizeof(confine_plugin_descriptor) of that version */
} confine_plugin_abi_info;

/* Exported as `confine_plugin`. */
typedef struct confine_plugin_descriptor {
    uint32_t struct_size;
    const char* runner_name; /* must equal the <name> in the file name */
    const char* plugin_version;
    const char* summary;
    /* Create one runner instance. Settings the runner does not know are an error
     * (CONFINE_E_INVALID_ARGUMENT with a message naming the key). Any error but
     * CONFINE_E_UNSUPPORTED is a configuration error, which fails every run closed;
     * CONFINE_E_UNSUPPORTED says the runner cannot work on this machine, and a chain
     * goes on to its next runner. */
    confine_status (*create)(const confine_host* host, const confine_runner_config* config,
                             void** out_instance, char** out_error);
    void (*destroy)(void* instance);
    /* Functional probe: does this runner confine here? Must finish within
     * timeout_ms; use host->run_probe to run commands. */
    confine_status (*probe)(void* instance, uint32_t timeout_ms, confine_verdict** out_verdict,
                            char** out_error);
    /* Pure transformation of (policy, argv). Spawns nothing. */
    confine_status (*wrap)(void* instance, const confine_policy* policy, const char* const* argv,
                           size_t argc, confine_wrap_result** out_result, char** out_error);
    void (*free_verdict)(confine_verdict* verdict);
    void (*free_wrap_result)(confine_wrap_result* result);
    void (*free_string)(char* string);
} confine_plugin_descriptor;

#ifdef __cplusplus
}
#endif

#endif /* CONFINE_PLUGIN_ABI_H */
