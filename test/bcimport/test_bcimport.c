/*
 * test_bcimport.c - the rules for importing code from the server's bitcode
 * (src/llvm/bcimport.c), outside the server.
 *
 *   test_bcimport FIXTURE.bc
 *	   Apply the rules to the functions of fixture.c and check each verdict
 *	   (a mutable static, directly, through a helper or function-local,
 *	   must be refused; constant data and exported symbols are fine), then
 *	   prepare and link two of them into an empty module and check what
 *	   came along.  Exit status 0 when every check holds.
 *
 *   test_bcimport --server BITCODEDIR EXPORTS SYMBOL...
 *	   For each SYMBOL, find its module through BITCODEDIR/postgres.index.bc
 *	   and print the verdict, one line each: "SYMBOL bitcode N" or
 *	   "SYMBOL refused REASON"; an importable one is also prepared, linked
 *	   into an empty module and verified.  EXPORTS lists the server's exported
 *	   symbols, one per line (nm -D --defined-only), standing in for the
 *	   running server that dlsym() consults inside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>

#include "bcimport.h"

static int	failures = 0;

/* ---- fixture mode: everything named fx_* is "exported" but one ---- */
static const void *
fixture_resolve(const char *name)
{
	if (strcmp(name, "fx_unexported_function") == 0)
		return NULL;
	return strncmp(name, "fx_", 3) == 0 ? (const void *) name : NULL;
}

static LLVMModuleRef
parse(LLVMContextRef ctx, const char *path)
{
	LLVMMemoryBufferRef buf;
	LLVMModuleRef mod;
	char	   *msg = NULL;

	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg))
	{
		fprintf(stderr, "cannot read %s: %s\n", path, msg);
		exit(2);
	}
	if (LLVMParseBitcodeInContext2(ctx, buf, &mod))
	{
		fprintf(stderr, "%s is not bitcode\n", path);
		exit(2);
	}
	LLVMDisposeMemoryBuffer(buf);
	return mod;
}

static void
expect(LLVMModuleRef mod, const char *sym, bool importable, const char *reason_part)
{
	BtjitWhy	why = {""};
	int			n = 0;
	bool		ok = btjit_bc_check(mod, sym, fixture_resolve, &n, &why);

	if (ok != importable ||
		(!ok && reason_part != NULL && strstr(why.text, reason_part) == NULL))
	{
		printf("FAIL %s: %s%s%s\n", sym, ok ? "importable" : "refused",
			   ok ? "" : ": ", why.text);
		failures++;
	}
	else
		printf("ok   %s: %s%s%s\n", sym, ok ? "importable" : "refused",
			   ok ? "" : ": ", why.text);
}

static void
check(bool cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	if (!cond)
		failures++;
}

/* Prepare sym from a fresh copy of the fixture and link it into dest. */
static bool
import_into(LLVMContextRef ctx, const char *path, LLVMModuleRef dest,
			const char *sym, const char *newname)
{
	LLVMModuleRef src = parse(ctx, path);
	BtjitWhy	why;
	int			n;

	if (!btjit_bc_prepare(src, sym, newname, fixture_resolve, &n, &why))
	{
		printf("FAIL prepare %s: %s\n", sym, why.text);
		failures++;
		LLVMDisposeModule(src);
		return false;
	}
	LLVMSetDataLayout(dest, LLVMGetDataLayoutStr(src));
	LLVMSetTarget(dest, LLVMGetTarget(src));
	return !LLVMLinkModules2(dest, src);
}

static int
fixture_mode(const char *path)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef mod = parse(ctx, path);
	LLVMModuleRef dest;
	LLVMValueRef f;
	char	   *msg = NULL;

	expect(mod, "fx_plain", true, NULL);
	expect(mod, "fx_mutable_static", false, "fx_counter");
	expect(mod, "fx_function_local_static", false, "not constant");
	expect(mod, "fx_const_table", true, NULL);
	expect(mod, "fx_via_static_helper", false, "fx_counter");
	expect(mod, "fx_via_clean_helper", true, NULL);
	expect(mod, "fx_calls_server", true, NULL);
	expect(mod, "fx_calls_unexported", false, "fx_unexported_function");
	expect(mod, "fx_reads_server_variable", true, NULL);
	expect(mod, "fx_thread_local", false, NULL);	/* mutable and TLS */
	expect(mod, "fx_server_thread_local", false, "thread-local");
	expect(mod, "fx_calls_dirty_external", true, NULL);
	expect(mod, "fx_no_such_function", false, "does not define");
	LLVMDisposeModule(mod);

	/* linking: a clean helper and constant come along, privately */
	dest = LLVMModuleCreateWithNameInContext("dest", ctx);
	check(import_into(ctx, path, dest, "fx_via_clean_helper", "imported_clean"),
		  "fx_via_clean_helper links");
	f = LLVMGetNamedFunction(dest, "imported_clean");
	check(f != NULL && !LLVMIsDeclaration(f), "its body is in the module under the new name");
	f = LLVMGetNamedFunction(dest, "fx_via_clean_helper");
	check(f == NULL || LLVMIsDeclaration(f), "the server's fx_via_clean_helper is not defined here");
	f = LLVMGetNamedFunction(dest, "fx_plain");
	check(f == NULL || LLVMIsDeclaration(f), "unrelated functions are not copied");
	check(LLVMGetNamedGlobal(dest, "fx_counter") == NULL, "the mutable static is not copied");

	/* an external callee that touches a mutable static stays the server's */
	check(import_into(ctx, path, dest, "fx_calls_dirty_external", "imported_dirty"),
		  "fx_calls_dirty_external links");
	f = LLVMGetNamedFunction(dest, "fx_dirty_external");
	check(f != NULL && LLVMIsDeclaration(f),
		  "fx_dirty_external is a declaration (the server's), not a copy");
	check(LLVMGetNamedGlobal(dest, "fx_counter") == NULL, "still no copy of the mutable static");
	f = LLVMGetNamedFunction(dest, "fx_server_function");
	check(f == NULL || LLVMIsDeclaration(f), "server functions are declarations");
	check(!LLVMVerifyModule(dest, LLVMReturnStatusAction, &msg), "the linked module verifies");
	LLVMDisposeMessage(msg);
	LLVMDisposeModule(dest);
	LLVMContextDispose(ctx);

	printf("%s\n", failures ? "test_bcimport: FAILED" : "test_bcimport: all checks passed");
	return failures ? 1 : 0;
}

/* ---- server mode ---- */
static char **exports;
static size_t nexports;

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static const void *
exports_resolve(const char *name)
{
	char	  **hit = bsearch(&name, exports, nexports, sizeof(char *), cmpstr);

	return hit ? (const void *) *hit : NULL;
}

static int
server_mode(const char *dir, const char *exportfile, int nsyms, char **syms)
{
	char		path[4096];
	char		line[512];
	FILE	   *f = fopen(exportfile, "r");
	size_t		cap = 0;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMMemoryBufferRef buf;
	char	   *msg = NULL;
	BtjitBcIndex index;
	BtjitWhy	why;

	if (f == NULL)
		return 2;
	while (fgets(line, sizeof(line), f))
	{
		line[strcspn(line, "\n")] = '\0';
		if (nexports == cap)
			exports = realloc(exports, (cap = cap ? cap * 2 : 4096) * sizeof(char *));
		exports[nexports++] = strdup(line);
	}
	fclose(f);
	qsort(exports, nexports, sizeof(char *), cmpstr);

	snprintf(path, sizeof(path), "%s/postgres.index.bc", dir);
	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg))
	{
		fprintf(stderr, "cannot read %s: %s\n", path, msg);
		return 2;
	}
	index = btjit_bc_index_parse(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf),
								 &why);
	if (index == NULL)
	{
		fprintf(stderr, "%s: %s\n", path, why.text);
		return 2;
	}
	for (int i = 0; i < nsyms; i++)
	{
		char		modpath[1024];
		LLVMModuleRef mod;
		int			n = 0;

		if (!btjit_bc_index_module(index, syms[i], modpath, sizeof(modpath)))
		{
			printf("%s refused postgres.index.bc names no module defining it\n", syms[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, modpath);
		mod = parse(ctx, path);
		if (!btjit_bc_check(mod, syms[i], exports_resolve, &n, &why))
		{
			printf("%s refused %s\n", syms[i], why.text);
			LLVMDisposeModule(mod);
			continue;
		}
		/* and it prepares, links into an empty module and verifies */
		{
			LLVMModuleRef dest = LLVMModuleCreateWithNameInContext("dest", ctx);
			bool		ok;

			LLVMSetDataLayout(dest, LLVMGetDataLayoutStr(mod));
			LLVMSetTarget(dest, LLVMGetTarget(mod));
			ok = btjit_bc_prepare(mod, syms[i], "imported", exports_resolve,
								  &n, &why);
			if (ok)
				ok = !LLVMLinkModules2(dest, mod);
			else
				LLVMDisposeModule(mod);
			if (ok)
				ok = !LLVMVerifyModule(dest, LLVMReturnStatusAction, &msg);
			if (ok)
				printf("%s bitcode %d %s\n", syms[i], n, modpath);
			else
				printf("%s refused prepare/link/verify failed: %s\n", syms[i],
					   msg ? msg : why.text);
			LLVMDisposeMessage(msg);
			msg = NULL;
			LLVMDisposeModule(dest);
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2)
		return fixture_mode(argv[1]);
	if (argc >= 4 && strcmp(argv[1], "--server") == 0)
		return server_mode(argv[2], argv[3], argc - 4, argv + 4);
	fprintf(stderr, "usage: test_bcimport FIXTURE.bc | --server DIR EXPORTS SYMBOL...\n");
	return 2;
}
