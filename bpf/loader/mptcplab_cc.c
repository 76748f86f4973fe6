// SPDX-License-Identifier: GPL-2.0
/*
 * mptcplab-cc: registers, unregisters and inspects the coupled MPTCP congestion controls
 * (mptcp_lia, mptcp_olia, mptcp_balia) built as BPF tcp_congestion_ops.
 *
 *   mptcplab-cc load [--obj-dir DIR] [--per-segment] [--cwnd-in-recovery]
 *                    [--olia-min-ssthresh N] [--replace] [--wait] NAME...
 *   mptcplab-cc unload [NAME...]        (all three when no NAME is given)
 *   mptcplab-cc status
 *
 * Every command prints one JSON document on stdout; errors go to stderr with exit status 1
 * (2 for bad usage).
 *
 * Why a small C program on libbpf: libbpf is the reference loader for struct_ops maps; the
 * Rust aya crate cannot load them, and libbpf-rs would only wrap the same library while adding
 * a crate to the workspace. The BPF side is C either way, so one Makefile builds both.
 *
 * Lifetime: libbpf 1.1 registers a struct_ops map the legacy way (a map update), so the
 * congestion control stays registered after this process exits, until `unload` deletes the
 * map element. `load --wait` keeps the process in the foreground instead and unregisters on
 * SIGINT/SIGTERM; if that process is killed with SIGKILL the registration stays behind and
 * `unload` (the cleaner) removes it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "../src/mptcp_cc_config.h"
#include "../src/mptcp_cc_math.h"

#define AVAILABLE_CC_PATH "/proc/sys/net/ipv4/tcp_available_congestion_control"

struct algorithm {
	const char *name;     /* tcp_congestion_ops name == struct_ops map name == object stem */
	const char *conn_map; /* per-connection slots (mptcp_cc_shared.bpf.h) */
	const char *cfg_map;  /* struct cc_config */
};

static const struct algorithm algorithms[] = {
	{ "mptcp_lia", "lia_conns", "lia_cfg" },
	{ "mptcp_olia", "olia_conns", "olia_cfg" },
	{ "mptcp_balia", "balia_conns", "balia_cfg" },
};
#define N_ALGORITHMS (sizeof(algorithms) / sizeof(algorithms[0]))

/* Mirrors struct cc_conn without the lock type, which user space does not have. */
struct conn_value {
	__u32 lock;
	__u32 closed;
	struct cc_path slot[CC_MAX_SLOTS];
};

static volatile sig_atomic_t stop_requested;
static sigset_t wait_mask; /* signal mask to wait with in load --wait */

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct algorithm *find_algorithm(const char *name)
{
	size_t i;

	for (i = 0; i < N_ALGORITHMS; i++)
		if (strcmp(algorithms[i].name, name) == 0)
			return &algorithms[i];
	return NULL;
}

static int cc_is_available(const char *name)
{
	char buf[4096], *tok, *save = NULL;
	FILE *f = fopen(AVAILABLE_CC_PATH, "r");
	size_t len;

	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (strcmp(tok, name) == 0)
			return 1;
	return 0;
}

/* Calls fn(fd, info, ctx) for every map of the given type and name; stops when fn returns
 * nonzero. Returns the number of maps visited or -errno. */
typedef int (*map_fn)(int fd, const struct bpf_map_info *info, void *ctx);

static int for_each_map(__u32 type, const char *name, map_fn fn, void *ctx)
{
	__u32 id = 0;
	int count = 0;

	for (;;) {
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		int fd, err;

		if (bpf_map_get_next_id(id, &id)) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue; /* freed meanwhile */
		memset(&info, 0, sizeof(info));
		err = bpf_obj_get_info_by_fd(fd, &info, &len);
		if (!err && info.type == type && strcmp(info.name, name) == 0) {
			count++;
			if (fn(fd, &info, ctx)) {
				close(fd);
				break;
			}
		}
		close(fd);
	}
	return count;
}

/* ---- unload --------------------------------------------------------------------------- */

struct unregister_ctx {
	int unregistered;
	int failed;
	int first;
	int print_ids;
};

static int unregister_one(int fd, const struct bpf_map_info *info, void *vctx)
{
	struct unregister_ctx *ctx = vctx;
	__u32 zero = 0;

	if (bpf_map_delete_elem(fd, &zero) == 0) {
		if (ctx->print_ids)
			printf("%s%u", ctx->first ? "" : ", ", info->id);
		ctx->first = 0;
		ctx->unregistered++;
	} else if (errno != ENOENT && errno != EINVAL && errno != EINPROGRESS) {
		/* ENOENT/EINVAL: not registered any more (freed together with its last socket).
		 * EINPROGRESS: already unregistered; the kernel frees the map when the last socket
		 * still running the algorithm closes. */
		fprintf(stderr, "mptcplab-cc: cannot unregister struct_ops map %u: %s\n", info->id,
			strerror(errno));
		ctx->failed++;
	}
	return 0;
}

static int cmd_unload(int argc, char **argv)
{
	const char *names[N_ALGORITHMS];
	int n = 0, i, failed = 0;

	if (argc == 0) {
		for (i = 0; i < (int)N_ALGORITHMS; i++)
			names[n++] = algorithms[i].name;
	} else {
		for (i = 0; i < argc; i++) {
			if (!find_algorithm(argv[i])) {
				fprintf(stderr, "mptcplab-cc: unknown congestion control '%s'\n", argv[i]);
				return 2;
			}
			if (n < (int)N_ALGORITHMS)
				names[n++] = argv[i];
		}
	}
	printf("{\"unloaded\": {");
	for (i = 0; i < n; i++) {
		struct unregister_ctx ctx = { .first = 1, .print_ids = 1 };
		int count;

		printf("%s\"%s\": [", i ? ", " : "", names[i]);
		count = for_each_map(BPF_MAP_TYPE_STRUCT_OPS, names[i], unregister_one, &ctx);
		printf("]");
		if (count < 0) {
			fprintf(stderr, "mptcplab-cc: cannot list BPF maps: %s\n", strerror(-count));
			failed = 1;
		}
		failed |= ctx.failed != 0;
		if (cc_is_available(names[i])) {
			fprintf(stderr, "mptcplab-cc: %s is still registered\n", names[i]);
			failed = 1;
		}
	}
	printf("}}\n");
	return failed ? 1 : 0;
}

/* ---- load ----------------------------------------------------------------------------- */

struct load_options {
	const char *obj_dir;
	struct cc_config cfg;
	int replace;
	int wait;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int load_one(const struct algorithm *alg, const struct load_options *opt,
		    struct bpf_object **obj_out, struct bpf_link **link_out, __u32 *map_id)
{
	char path[4096];
	struct bpf_object *obj;
	struct bpf_map *ops, *cfg;
	struct bpf_link *link;
	struct bpf_map_info info;
	__u32 len = sizeof(info), zero = 0;
	int err;

	snprintf(path, sizeof(path), "%s/%s.bpf.o", opt->obj_dir, alg->name);
	if (access(path, R_OK)) {
		fprintf(stderr, "mptcplab-cc: object %s: %s (run make -C bpf)\n", path,
			strerror(errno));
		return -1;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "mptcplab-cc: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "mptcplab-cc: kernel rejected %s: %s\n", path, strerror(-err));
		goto fail;
	}
	cfg = bpf_object__find_map_by_name(obj, alg->cfg_map);
	ops = bpf_object__find_map_by_name(obj, alg->name);
	if (!cfg || !ops) {
		fprintf(stderr, "mptcplab-cc: %s lacks map %s or %s\n", path, alg->cfg_map,
			alg->name);
		goto fail;
	}
	if (bpf_map_update_elem(bpf_map__fd(cfg), &zero, &opt->cfg, BPF_ANY)) {
		fprintf(stderr, "mptcplab-cc: cannot write %s: %s\n", alg->cfg_map, strerror(errno));
		goto fail;
	}
	link = bpf_map__attach_struct_ops(ops);
	if (!link) {
		fprintf(stderr, "mptcplab-cc: cannot register %s: %s\n", alg->name, strerror(errno));
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	bpf_obj_get_info_by_fd(bpf_map__fd(ops), &info, &len);
	*map_id = info.id;
	*obj_out = obj;
	*link_out = link;
	return 0;
fail:
	bpf_object__close(obj);
	return -1;
}

static int cmd_load(int argc, char **argv, struct load_options *opt)
{
	struct bpf_object *objs[N_ALGORITHMS] = {};
	struct bpf_link *links[N_ALGORITHMS] = {};
	const struct algorithm *algs[N_ALGORITHMS];
	__u32 ids[N_ALGORITHMS] = {};
	int n = 0, i, j, rc = 0;

	if (argc == 0) {
		fprintf(stderr, "mptcplab-cc: load needs at least one congestion control name\n");
		return 2;
	}
	for (i = 0; i < argc; i++) {
		const struct algorithm *alg = find_algorithm(argv[i]);

		if (!alg) {
			fprintf(stderr, "mptcplab-cc: unknown congestion control '%s' (expected "
					"mptcp_lia, mptcp_olia or mptcp_balia)\n", argv[i]);
			return 2;
		}
		for (j = 0; j < n; j++)
			if (algs[j] == alg)
				break;
		if (j == n)
			algs[n++] = alg;
	}
	if (opt->cfg.olia_min_ssthresh != 1 && opt->cfg.olia_min_ssthresh != 2) {
		fprintf(stderr, "mptcplab-cc: --olia-min-ssthresh must be 1 or 2\n");
		return 2;
	}
	libbpf_set_print(libbpf_print);
	if (opt->wait) {
		/* Block the stop signals until sigsuspend below, so that one arriving right after
		 * the JSON line (or before) is neither lost nor fatal. */
		struct sigaction sa = { .sa_handler = on_signal };
		sigset_t stop;

		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigprocmask(SIG_BLOCK, &stop, &wait_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}

	for (i = 0; i < n; i++) {
		if (cc_is_available(algs[i]->name)) {
			struct unregister_ctx ctx = { .first = 1 };

			if (!opt->replace) {
				fprintf(stderr, "mptcplab-cc: %s is already registered (use --replace "
						"or unload first)\n", algs[i]->name);
				rc = 1;
				goto out;
			}
			for_each_map(BPF_MAP_TYPE_STRUCT_OPS, algs[i]->name, unregister_one, &ctx);
			if (cc_is_available(algs[i]->name)) {
				fprintf(stderr, "mptcplab-cc: %s is registered by something else\n",
					algs[i]->name);
				rc = 1;
				goto out;
			}
		}
		if (load_one(algs[i], opt, &objs[i], &links[i], &ids[i])) {
			rc = 1;
			goto out;
		}
		if (!cc_is_available(algs[i]->name)) {
			fprintf(stderr, "mptcplab-cc: %s registered but not listed in %s\n",
				algs[i]->name, AVAILABLE_CC_PATH);
			rc = 1;
			goto out;
		}
	}

	printf("{\"loaded\": {");
	for (i = 0; i < n; i++)
		printf("%s\"%s\": {\"struct_ops_map_id\": %u, \"object\": \"%s/%s.bpf.o\"}",
		       i ? ", " : "", algs[i]->name, ids[i], opt->obj_dir, algs[i]->name);
	printf("}, \"config\": {\"count_per_segment\": %u, \"ssthresh_in_recovery\": %u, "
	       "\"olia_min_ssthresh\": %u}, \"wait\": %s}\n",
	       opt->cfg.count_per_segment, opt->cfg.ssthresh_in_recovery,
	       opt->cfg.olia_min_ssthresh, opt->wait ? "true" : "false");
	fflush(stdout);

	if (opt->wait) {
		while (!stop_requested)
			sigsuspend(&wait_mask);
		/* Destroying the links below unregisters. */
	} else {
		/* Keep the registration after exit (see the header comment). */
		for (i = 0; i < n; i++)
			bpf_link__disconnect(links[i]);
	}
out:
	/* Destroying a link that is still connected unregisters: on failure this undoes what
	 * this call registered, and after --wait it is the clean shutdown. */
	for (i = 0; i < n; i++) {
		bpf_link__destroy(links[i]);
		bpf_object__close(objs[i]);
	}
	return rc;
}

/* ---- status --------------------------------------------------------------------------- *
 *
 * Each registration (a struct_ops map) is tied to its own connection and config maps through
 * its programs: the kernel reports the id of the program behind every function pointer of the
 * struct_ops value, and a program lists the maps it uses. Maps of an earlier registration
 * that open sockets still hold are thus never confused with the current ones.
 */

/* Offsets inside the value of a tcp_congestion_ops struct_ops map, from the kernel's BTF. */
struct ops_layout {
	__u32 state_off;      /* enum bpf_struct_ops_state in the common header */
	__u32 cong_avoid_off; /* prog id of .cong_avoid */
	int ok;
};

static int member_offset(const struct btf *btf, const char *type, const char *member,
			 __u32 *off)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	__u16 i;

	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), member) == 0) {
			*off = btf_member_bit_offset(t, i) / 8;
			return 0;
		}
	}
	return -1;
}

static struct ops_layout load_layout(void)
{
	struct ops_layout layout = {};
	struct btf *btf = btf__load_vmlinux_btf();
	__u32 common, state, data, cong_avoid;

	if (!btf)
		return layout;
	if (!member_offset(btf, "bpf_struct_ops_tcp_congestion_ops", "common", &common) &&
	    !member_offset(btf, "bpf_struct_ops_common_value", "state", &state) &&
	    !member_offset(btf, "bpf_struct_ops_tcp_congestion_ops", "data", &data) &&
	    !member_offset(btf, "tcp_congestion_ops", "cong_avoid", &cong_avoid)) {
		layout.state_off = common + state;
		layout.cong_avoid_off = data + cong_avoid;
		layout.ok = 1;
	}
	btf__free(btf);
	return layout;
}

static const char *state_name(__u32 state)
{
	/* enum bpf_struct_ops_state */
	switch (state) {
	case 0:
		return "init";
	case 1:
		return "inuse";
	case 2:
		return "tobefree";
	case 3:
		return "ready";
	default:
		return "unknown";
	}
}

static void print_connections(int fd)
{
	__u32 key, next, *prev = NULL;
	struct conn_value value;
	int first_conn = 1;

	printf("[");
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		int s, used = 0, first_slot = 1;

		key = next;
		prev = &key;
		/* A closed entry is a connection being deleted: its last subflow has left. */
		if (bpf_map_lookup_elem(fd, &key, &value) || value.closed)
			continue;
		for (s = 0; s < CC_MAX_SLOTS; s++)
			used += value.slot[s].tag != 0;
		printf("%s{\"token\": %u, \"slots_used\": %d, \"slots\": [", first_conn ? "" : ", ",
		       key, used);
		first_conn = 0;
		for (s = 0; s < CC_MAX_SLOTS; s++) {
			if (!value.slot[s].tag)
				continue;
			printf("%s{\"index\": %d, \"cwnd\": %u, \"srtt_us\": %u, "
			       "\"loss_interval\": %u}",
			       first_slot ? "" : ", ", s, value.slot[s].cwnd, value.slot[s].srtt_us,
			       value.slot[s].loss_interval);
			first_slot = 0;
		}
		printf("]}");
	}
	printf("]");
}

static void print_config(int fd)
{
	struct cc_config cfg;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &cfg)) {
		printf("null");
		return;
	}
	printf("{\"count_per_segment\": %u, \"ssthresh_in_recovery\": %u, "
	       "\"olia_min_ssthresh\": %u}",
	       cfg.count_per_segment, cfg.ssthresh_in_recovery, cfg.olia_min_ssthresh);
}

/* The map of the given name among those used by program prog_id, as an fd (or -1). */
static int prog_map_by_name(__u32 prog_id, const char *name, __u32 *map_id)
{
	struct bpf_prog_info info;
	__u32 ids[16], len = sizeof(info), i;
	int prog_fd = bpf_prog_get_fd_by_id(prog_id), found = -1;

	if (prog_fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0) {
		for (i = 0; i < info.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
			struct bpf_map_info minfo;
			__u32 mlen = sizeof(minfo);
			int fd = bpf_map_get_fd_by_id(ids[i]);

			if (fd < 0)
				continue;
			memset(&minfo, 0, sizeof(minfo));
			if (bpf_obj_get_info_by_fd(fd, &minfo, &mlen) == 0 &&
			    strcmp(minfo.name, name) == 0) {
				*map_id = minfo.id;
				found = fd;
				break;
			}
			close(fd);
		}
	}
	close(prog_fd);
	return found;
}

struct instance_ctx {
	const struct algorithm *alg;
	const struct ops_layout *layout;
	int first;
};

static int print_instance(int fd, const struct bpf_map_info *info, void *vctx)
{
	struct instance_ctx *ctx = vctx;
	unsigned char value[1024];
	__u32 zero = 0, state = 0, conn_id = 0, cfg_id = 0;
	__u64 prog_id = 0;
	int conn_fd = -1, cfg_fd = -1;

	printf("%s{\"struct_ops_map_id\": %u", ctx->first ? "" : ", ", info->id);
	ctx->first = 0;
	if (ctx->layout->ok && info->value_size <= sizeof(value) &&
	    ctx->layout->cong_avoid_off + sizeof(prog_id) <= info->value_size &&
	    bpf_map_lookup_elem(fd, &zero, value) == 0) {
		memcpy(&state, value + ctx->layout->state_off, sizeof(state));
		memcpy(&prog_id, value + ctx->layout->cong_avoid_off, sizeof(prog_id));
		conn_fd = prog_map_by_name((__u32)prog_id, ctx->alg->conn_map, &conn_id);
		cfg_fd = prog_map_by_name((__u32)prog_id, ctx->alg->cfg_map, &cfg_id);
	}
	printf(", \"state\": \"%s\", \"config\": ", state_name(state));
	if (cfg_fd >= 0)
		print_config(cfg_fd);
	else
		printf("null");
	printf(", \"connection_map_id\": %u, \"connections\": ", conn_id);
	if (conn_fd >= 0)
		print_connections(conn_fd);
	else
		printf("[]");
	printf("}");
	if (conn_fd >= 0)
		close(conn_fd);
	if (cfg_fd >= 0)
		close(cfg_fd);
	return 0;
}

static int cmd_status(void)
{
	struct ops_layout layout = load_layout();
	size_t i;

	if (!layout.ok)
		fprintf(stderr, "mptcplab-cc: kernel BTF lacks the tcp_congestion_ops struct_ops "
				"layout; connections are not reported\n");
	printf("{");
	for (i = 0; i < N_ALGORITHMS; i++) {
		struct instance_ctx ctx = { .alg = &algorithms[i], .layout = &layout, .first = 1 };

		printf("%s\"%s\": {\"registered\": %s, \"instances\": [", i ? ", " : "",
		       algorithms[i].name, cc_is_available(algorithms[i].name) ? "true" : "false");
		for_each_map(BPF_MAP_TYPE_STRUCT_OPS, algorithms[i].name, print_instance, &ctx);
		printf("]}");
	}
	printf("}\n");
	return 0;
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mptcplab-cc load [--obj-dir DIR] [--per-segment] [--cwnd-in-recovery]\n"
		"                        [--olia-min-ssthresh 1|2] [--replace] [--wait] NAME...\n"
		"       mptcplab-cc unload [NAME...]\n"
		"       mptcplab-cc status\n"
		"NAME: mptcp_lia, mptcp_olia, mptcp_balia\n");
}

static const char *default_obj_dir(const char *argv0)
{
	static char dir[4096];
	char *slash;
	ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	if (len <= 0) {
		snprintf(dir, sizeof(dir), "%s", argv0);
		len = (ssize_t)strlen(dir);
	}
	dir[len] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	return dir;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "obj-dir", required_argument, NULL, 'd' },
		{ "per-segment", no_argument, NULL, 's' },
		{ "cwnd-in-recovery", no_argument, NULL, 'c' },
		{ "olia-min-ssthresh", required_argument, NULL, 'm' },
		{ "replace", no_argument, NULL, 'r' },
		{ "wait", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct load_options opt = { .cfg = CC_CONFIG_DEFAULTS };
	const char *cmd;
	char *end;
	int c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	opt.obj_dir = default_obj_dir(argv[0]);
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.obj_dir = optarg;
			break;
		case 's':
			opt.cfg.count_per_segment = 1;
			break;
		case 'c':
			opt.cfg.ssthresh_in_recovery = 0;
			break;
		case 'm':
			opt.cfg.olia_min_ssthresh = (__u32)strtoul(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "mptcplab-cc: --olia-min-ssthresh: expected 1 or 2, "
						"got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			opt.replace = 1;
			break;
		case 'w':
			opt.wait = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (strcmp(cmd, "load") == 0)
		return cmd_load(argc - optind, argv + optind, &opt);
	if (strcmp(cmd, "unload") == 0)
		return cmd_unload(argc - optind, argv + optind);
	if (strcmp(cmd, "status") == 0)
		return cmd_status();
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "mptcplab-cc: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
