/*-------------------------------------------------------------------------
 *
 * specialise.c
 *	  Specialise the bitcode template for one key shape and compile it with
 *	  LLVM ORC: the heart of the compiler library, btree_jit_llvm.so.
 *
 * Per process, on first need (never in the postmaster): one target machine
 * for the host and one LLJIT instance.  Per shape: parse the template into
 * a context of its own, give btjit_shape_param the shape as its constant
 * initializer, give the entry functions names of their own and make
 * everything else internal, fold the shape (sccp, simplifycfg) before the
 * O2 pipeline (the shape tests fold, the column loops unroll), emit an
 * object file and add it to the LLJIT.
 *
 * A called column whose proc is a built-in function (the shape names its
 * symbol) gets the proc's body imported from the server's bitcode, when
 * bcimport.c's rules allow: the module that defines it is found through
 * postgres.index.bc, parsed, prepared (llvm_bitcode.cpp) and linked into
 * the specialised module, and the template's placeholders for that column
 * become the imported copy and the server's own function (the guard).  A
 * column whose import is refused is called, and the reason goes into the
 * object's tier string (BtjitLinkedCode.bcinfo, and a function of the object
 * returning it, for processes that link it from the object cache).
 *
 * The object file is also handed back to the module (compile/), which
 * stores it in the object cache: later backends link it from there without
 * loading LLVM at all.
 *
 * The library is the files of src/llvm/, the only part of the module that
 * links LLVM; compile/compiler_lib.c loads it on a process's first compile,
 * through btjit_compiler_init().  Its interface with the module is
 * include/compiler.h; it includes nothing else of the module's but
 * include/'s shape.h and code_abi.h.
 *
 * Failures are reported as text, never raised: a shape that cannot be
 * compiled leaves its indexes on the stock path.  LLVM's own fatal errors
 * and allocation failures are turned into a FATAL by llvm_error.cpp, which
 * ends the session cleanly rather than aborting the server, while its
 * guard is raised; PG_FINALLY blocks lower it again when an ERROR (a failed
 * palloc) leaves the library early.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Linker.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Object.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "fmgr.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "bcimport.h"
#include "compiler.h"

/* Loaded with load_external_function(), which checks for the magic block. */
PG_MODULE_MAGIC;

/* the plain search; each target's entry is named by targetlist.h */
#define BTJIT_TEMPLATE_ENTRY "btjit_search"
#define BTJIT_TEMPLATE_SHAPE "btjit_shape_param"
#define BTJIT_TEMPLATE_LATE_INLINES "btjit_inline_after_bind"
#define BTJIT_TEMPLATE_BC_PROC "btjit_bc_proc"	/* + column number */
#define BTJIT_TEMPLATE_BC_SERVER "btjit_bc_server"

/* An imported body this small is always inlined into the search. */
#define BTJIT_BC_ALWAYS_INLINE_INSTR 200

static bool btjit_llvm_ready = false;
static LLVMContextRef btjit_context = NULL;	/* one compile's (see below) */
static LLVMTargetMachineRef btjit_target_machine = NULL;
static LLVMOrcLLJITRef btjit_lljit = NULL;
static BtjitBcIndex btjit_bc_index = NULL;	/* postgres.index.bc, parsed */
static uint64 btjit_bc_index_hash = 0;	/* of the bytes it was parsed from */

/*
 * Where a compile's time goes, reported at DEBUG1 after each compile (in
 * the compile worker's child: log_min_messages = debug1; in a backend,
 * btree_jit_compile() with client_min_messages = debug1).  Phases are
 * cumulative over a retry without imports.
 */
typedef enum BtjitPhase
{
	BTJIT_PH_INIT,				/* target machine, LLJIT (once per process) */
	BTJIT_PH_PARSE,				/* the template's bitcode */
	BTJIT_PH_IMPORT,			/* server bitcode: parse, prepare, link */
	BTJIT_PH_BIND,				/* shape constant, linkage, verify */
	BTJIT_PH_OPT,				/* the pass pipeline */
	BTJIT_PH_CODEGEN,			/* instruction selection to object file */
	BTJIT_PH_LINK,				/* the object into LLJIT, entry lookup */
	BTJIT_PH_COUNT
} BtjitPhase;

static const char *const btjit_phase_names[BTJIT_PH_COUNT] = {
	"init", "parse", "import", "bind", "opt", "codegen", "link"
};
static double btjit_phase_ms[BTJIT_PH_COUNT];	/* CPU time of the thread */
static double btjit_phase_start;
static instr_time btjit_compile_start;

/* This thread's CPU time in ms: the phases are timed in CPU, not wall,
 * time, so that a busy machine does not blur them. */
static double
btjit_cpu_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1000000.0;
}

static inline void
btjit_phase_begin(void)
{
	btjit_phase_start = btjit_cpu_ms();
}

/* Add the time since the last btjit_phase_begin/end to phase; restart. */
static inline void
btjit_phase_end(BtjitPhase phase)
{
	double		now = btjit_cpu_ms();

	btjit_phase_ms[phase] += now - btjit_phase_start;
	btjit_phase_start = now;
}

static void
btjit_phase_report(const char *key)
{
	char		buf[256];
	int			len = 0;
	double		total = 0;
	instr_time	wall;

	INSTR_TIME_SET_CURRENT(wall);
	INSTR_TIME_SUBTRACT(wall, btjit_compile_start);
	for (int i = 0; i < BTJIT_PH_COUNT; i++)
	{
		len += snprintf(buf + len, sizeof(buf) - len, " %s %.1f",
						btjit_phase_names[i], btjit_phase_ms[i]);
		total += btjit_phase_ms[i];
	}
	elog(DEBUG1, "btree_jit: compile phases of %s, CPU ms:%s; total %.1f CPU ms, %.1f ms wall",
		 key, buf, total, INSTR_TIME_GET_MILLISEC(wall));
}

/*
 * BTJIT_PASSES (compiler.h) is O2 rather than O3: on the page-search
 * template it produces the same hot loops, and compiles about a third
 * faster.  It starts with one function pass of sparse conditional constant
 * propagation and CFG simplification: clang's -O2 has already unrolled the
 * template for every column kind the shape might have (about 150,000
 * instructions), and once btjit_shape_param has its initializer this pass
 * folds every test on the shape and drops the dead paths (to about 25,000),
 * so that the O2 pipeline works on what the shape keeps.  Without it, O2's
 * own early passes (SimplifyCFG, EarlyCSE, then IPSCCP) walked the whole
 * template: the pipeline took twice as long (measured on 18, int4 x 3:
 * 310 against 160 CPU ms) for the same machine code (compared instruction
 * for instruction on int4 x 3, int8/int2/int4 and interval shapes; on a
 * text shape two blocks of one function are laid out in another order).
 */

/*
 * Errors LLVM reports through the context (a bitcode file that does not
 * parse, for one) end in exit() unless someone handles them; keep the last
 * one as text instead.
 */
static char btjit_llvm_diagnostic[256];

static void
btjit_diagnostic_handler(LLVMDiagnosticInfoRef info, void *arg)
{
	if (LLVMGetDiagInfoSeverity(info) == LLVMDSError)
	{
		char	   *msg = LLVMGetDiagInfoDescription(info);

		strlcpy(btjit_llvm_diagnostic, msg, sizeof(btjit_llvm_diagnostic));
		LLVMDisposeMessage(msg);
	}
}

/* Copy an LLVM error's message into why and free the error. */
static void
btjit_take_error(LLVMErrorRef err, const char *what, BtjitWhy *why)
{
	char	   *msg = LLVMGetErrorMessage(err);

	btjit_why_set(why, "%s: %s", what, msg);
	LLVMDisposeErrorMessage(msg);
}

/* Set up LLVM for this backend: target, target machine, LLJIT. */
static bool
btjit_llvm_init(BtjitWhy *why)
{
	char	   *triple;
	char	   *cpu;
	char	   *features;
	char	   *error = NULL;
	LLVMTargetRef target;
	LLVMErrorRef err;

	if (btjit_llvm_ready)
		return true;

	if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter())
	{
		btjit_why_set(why, "LLVM has no native target");
		return false;
	}

	triple = LLVMGetDefaultTargetTriple();
	if (LLVMGetTargetFromTriple(triple, &target, &error))
	{
		btjit_why_set(why, "no LLVM target for %s: %s", triple, error);
		LLVMDisposeMessage(error);
		LLVMDisposeMessage(triple);
		return false;
	}
	cpu = LLVMGetHostCPUName();
	features = LLVMGetHostCPUFeatures();
	btjit_target_machine =
		LLVMCreateTargetMachine(target, triple, cpu, features,
								LLVMCodeGenLevelAggressive,
								LLVMRelocDefault, LLVMCodeModelJITDefault);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
	if (btjit_target_machine == NULL)
	{
		btjit_why_set(why, "could not create an LLVM target machine");
		return false;
	}

	err = LLVMOrcCreateLLJIT(&btjit_lljit, NULL);
	if (err != NULL)
	{
		btjit_take_error(err, "could not create LLJIT", why);
		LLVMDisposeTargetMachine(btjit_target_machine);
		btjit_target_machine = NULL;
		return false;
	}

	/*
	 * The compiled code refers to the server's buffer arrays and to
	 * btjit_declined by name; resolve them from the running process.
	 */
	{
		LLVMOrcDefinitionGeneratorRef gen;

		err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
																   LLVMOrcLLJITGetGlobalPrefix(btjit_lljit),
																   NULL, NULL);
		if (err != NULL)
		{
			btjit_take_error(err, "could not create a symbol generator", why);
			return false;
		}
		LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(btjit_lljit), gen);
	}

	btjit_llvm_ready = true;
	return true;
}

/*
 * Each compile (and each explain) has an LLVM context of its own, created
 * when it starts and disposed of, with everything in it, when it ends: the
 * template's and the server bitcode's types and constants do not pile up
 * in a backend that compiles shape after shape.
 */
static void
btjit_context_create(void)
{
	Assert(btjit_context == NULL);
	btjit_context = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(btjit_context, btjit_diagnostic_handler, NULL);
}

static void
btjit_context_dispose(void)
{
	if (btjit_context != NULL)
		LLVMContextDispose(btjit_context);
	btjit_context = NULL;
}

/*
 * Parse the template into a new module of this compile's context; NULL
 * with why.  Parsed for each compile rather than parsed once and cloned:
 * the template is large (clang's -O2 has unrolled every column kind into
 * each unrolled column), and cloning it took twice as long as parsing it
 * (measured on 18: 110-135 ms against 50-70 ms); the compile worker's
 * child, which compiles one shape, parsed and cloned.
 */
static LLVMModuleRef
btjit_parse_template(const BtjitTemplate *tmpl, BtjitWhy *why)
{
	LLVMMemoryBufferRef view;
	LLVMModuleRef mod = NULL;

	/* The parser consumes its buffer; give it a view of the bytes. */
	view = LLVMCreateMemoryBufferWithMemoryRange(tmpl->data, tmpl->len,
												 "btree_jit template", false);
	btjit_llvm_diagnostic[0] = '\0';
	if (LLVMParseBitcodeInContext2(btjit_context, view, &mod))
	{
		btjit_why_set(why, "template \"%s\" is not valid bitcode: %s",
					  tmpl->path,
					  btjit_llvm_diagnostic[0] ? btjit_llvm_diagnostic : "unknown error");
		LLVMDisposeMemoryBuffer(view);
		return NULL;
	}
	LLVMDisposeMemoryBuffer(view);

	/* every entry point the specialiser names, so that none is NULL there */
	if (LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_ENTRY) == NULL ||
		LLVMGetNamedGlobal(mod, BTJIT_TEMPLATE_SHAPE) == NULL)
	{
		btjit_why_set(why, "template \"%s\" lacks %s or %s",
					  tmpl->path, BTJIT_TEMPLATE_ENTRY, BTJIT_TEMPLATE_SHAPE);
		LLVMDisposeModule(mod);
		return NULL;
	}
	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const char *entry = btjit_target_info(t)->template_entry;

		if (entry != NULL && LLVMGetNamedFunction(mod, entry) == NULL)
		{
			btjit_why_set(why, "template \"%s\" lacks %s, the entry for %s",
						  tmpl->path, entry, btjit_target_info(t)->symbol);
			LLVMDisposeModule(mod);
			return NULL;
		}
	}
	return mod;
}

/*
 * Build an LLVM constant of the given type from the bytes of a C value laid
 * out by the same ABI.  Walking the type keeps us independent of how clang
 * chose to represent the struct (padding arrays included).
 */
static LLVMValueRef
btjit_const_from_bytes(LLVMTargetDataRef td, LLVMTypeRef type,
					   const unsigned char *bytes)
{
	switch (LLVMGetTypeKind(type))
	{
		case LLVMIntegerTypeKind:
			{
				unsigned	bits = LLVMGetIntTypeWidth(type);
				uint64		v = 0;

				if (bits % 8 != 0 || bits > 64)
					return NULL;
				memcpy(&v, bytes, bits / 8);	/* little-endian host */
				return LLVMConstInt(type, v, false);
			}
		case LLVMArrayTypeKind:
			{
				LLVMTypeRef et = LLVMGetElementType(type);
				unsigned	n = LLVMGetArrayLength(type);
				uint64		esize = LLVMABISizeOfType(td, et);
				LLVMValueRef *elems = palloc(sizeof(LLVMValueRef) * Max(n, 1));
				LLVMValueRef result;

				for (unsigned i = 0; i < n; i++)
					if ((elems[i] = btjit_const_from_bytes(td, et, bytes + i * esize)) == NULL)
						return NULL;
				result = LLVMConstArray(et, elems, n);
				pfree(elems);
				return result;
			}
		case LLVMStructTypeKind:
			{
				unsigned	n = LLVMCountStructElementTypes(type);
				LLVMTypeRef *types = palloc(sizeof(LLVMTypeRef) * Max(n, 1));
				LLVMValueRef *elems = palloc(sizeof(LLVMValueRef) * Max(n, 1));
				LLVMValueRef result;

				LLVMGetStructElementTypes(type, types);
				for (unsigned i = 0; i < n; i++)
					if ((elems[i] = btjit_const_from_bytes(td, types[i],
														   bytes + LLVMOffsetOfElement(td, type, i))) == NULL)
						return NULL;
				result = LLVMConstNamedStruct(type, elems, n);
				pfree(types);
				pfree(elems);
				return result;
			}
		default:
			return NULL;
	}
}

/* Imports resolve to the running process's symbols, as the linkers do. */
static const void *
btjit_resolve_in_process(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/*
 * Read a whole file into palloc'd memory; NULL with why.  The server's
 * bitcode files are a few hundred kB at most.
 */
static char *
btjit_slurp(const char *path, size_t *len, BtjitWhy *why)
{
	FILE	   *f = fopen(path, "rb");
	char	   *data;
	long		size;

	if (f == NULL)
	{
		btjit_why_set(why, "could not open \"%s\": %m", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
		size > 256L * 1024 * 1024 || fseek(f, 0, SEEK_SET) != 0)
	{
		btjit_why_set(why, "could not size \"%s\"", path);
		fclose(f);
		return NULL;
	}
	data = palloc_extended(Max(size, 1), MCXT_ALLOC_NO_OOM);
	if (data == NULL || fread(data, 1, size, f) != (size_t) size)
	{
		btjit_why_set(why, "could not read \"%s\"", path);
		if (data)
			pfree(data);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = size;
	return data;
}

/*
 * The parsed postgres.index.bc of bc, provided its bytes are still those
 * identified at start-up (bitcode.c): the object key names them.
 */
static bool
btjit_bc_load_index(const BtjitServerBitcode *bc, BtjitWhy *why)
{
	char		path[MAXPGPATH];
	char	   *data;
	size_t		len;
	uint64		h;

	if (btjit_bc_index != NULL && btjit_bc_index_hash == bc->index_hash)
		return true;
	snprintf(path, sizeof(path), "%s/postgres.index.bc", bc->dir);
	data = btjit_slurp(path, &len, why);
	if (data == NULL)
		return false;
	h = btjit_fnv1a(BTJIT_FNV1A_BASIS, data, len);
	if (h != bc->index_hash)
	{
		btjit_why_set(why, "\"%s\" changed since the server started", path);
		pfree(data);
		return false;
	}
	if (btjit_bc_index != NULL)
		btjit_bc_index_free(btjit_bc_index);
	btjit_bc_index = btjit_bc_index_parse(data, len, why);
	pfree(data);
	if (btjit_bc_index == NULL)
		return false;
	btjit_bc_index_hash = h;
	return true;
}

/*
 * Import sym's body from the server's bitcode into mod, as an internal
 * function; NULL with why if it may not be imported (mod unchanged).
 * *broken is set if linking failed half-way: mod is then unusable.
 */
static LLVMValueRef
btjit_bc_import(LLVMModuleRef mod, const BtjitServerBitcode *bc,
				const char *sym, bool *broken, BtjitWhy *why)
{
	char		modpath[MAXPGPATH];
	char		path[MAXPGPATH];
	char		newname[64];
	char	   *data;
	size_t		len;
	LLVMMemoryBufferRef view;
	LLVMModuleRef src;
	LLVMValueRef fn;
	int			ninstr = 0;

	*broken = false;
	if (!bc->usable)
	{
		btjit_why_copy(why, bc->why);
		return NULL;
	}
	if (!btjit_bc_load_index(bc, why))
		return NULL;
	if (!btjit_bc_index_module(btjit_bc_index, sym, modpath, sizeof(modpath)))
	{
		btjit_why_set(why, "postgres.index.bc names no module defining it");
		return NULL;
	}
	if (strstr(modpath, "..") != NULL || modpath[0] == '/')
	{
		btjit_why_set(why, "postgres.index.bc names module \"%s\"", modpath);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", bc->dir, modpath);
	data = btjit_slurp(path, &len, why);
	if (data == NULL)
		return NULL;
	view = LLVMCreateMemoryBufferWithMemoryRange(data, len, path, false);
	btjit_llvm_diagnostic[0] = '\0';
	if (LLVMParseBitcodeInContext2(btjit_context, view, &src))
	{
		btjit_why_set(why, "\"%s\" is not valid bitcode: %s", path,
					  btjit_llvm_diagnostic[0] ? btjit_llvm_diagnostic : "unknown error");
		LLVMDisposeMemoryBuffer(view);
		pfree(data);
		return NULL;
	}
	LLVMDisposeMemoryBuffer(view);
	pfree(data);

	/* the same target and layout as the template, or nothing */
	if (strcmp(LLVMGetDataLayoutStr(src), LLVMGetDataLayoutStr(mod)) != 0)
	{
		btjit_why_set(why, "\"%s\" has another data layout than the template", path);
		LLVMDisposeModule(src);
		return NULL;
	}

	snprintf(newname, sizeof(newname), "btjit_bc_import_%s", sym);
	if (!btjit_bc_prepare(src, sym, newname, btjit_resolve_in_process,
						  &ninstr, why))
	{
		LLVMDisposeModule(src);
		return NULL;
	}
	/* LLVMLinkModules2 takes src, whatever happens */
	LLVMSetTarget(src, LLVMGetTarget(mod));
	btjit_llvm_diagnostic[0] = '\0';
	if (LLVMLinkModules2(mod, src))
	{
		btjit_why_set(why, "linking \"%s\" failed: %s", path,
					  btjit_llvm_diagnostic[0] ? btjit_llvm_diagnostic : "unknown error");
		*broken = true;
		return NULL;
	}
	fn = LLVMGetNamedFunction(mod, newname);
	if (fn == NULL || LLVMIsDeclaration(fn))
	{
		btjit_why_set(why, "%s did not come through the link", sym);
		*broken = true;
		return NULL;
	}
	LLVMSetLinkage(fn, LLVMInternalLinkage);

	/* small bodies are inlined into each search loop, unless forbidden */
	if (ninstr <= BTJIT_BC_ALWAYS_INLINE_INSTR)
	{
		unsigned	noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
		unsigned	optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
		unsigned	always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);

		if (LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, noinline) == NULL &&
			LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, optnone) == NULL)
			LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
									LLVMCreateEnumAttribute(btjit_context, always, 0));
	}
	return fn;
}

/* Replace every use of placeholder by value (cast to its type) and drop it. */
static void
btjit_replace_placeholder(LLVMValueRef placeholder, LLVMValueRef value)
{
	LLVMTypeRef type = LLVMTypeOf(placeholder);

	if (LLVMTypeOf(value) != type)
		value = LLVMConstPointerCast(value, type);
	LLVMReplaceAllUsesWith(placeholder, value);
	LLVMDeleteFunction(placeholder);
}

/*
 * Give column i's placeholders their meaning: the imported body and the
 * server's function named sym, or, with imported NULL, nothing (the bound
 * shape makes them unreachable).  False if sym names something else in mod.
 */
static bool
btjit_bind_placeholders(LLVMModuleRef mod, int i, LLVMValueRef imported,
						const char *sym)
{
	char		name[64];
	LLVMValueRef proc;
	LLVMValueRef server;

	snprintf(name, sizeof(name), "%s%d", BTJIT_TEMPLATE_BC_PROC, i);
	proc = LLVMGetNamedFunction(mod, name);
	snprintf(name, sizeof(name), "%s%d", BTJIT_TEMPLATE_BC_SERVER, i);
	server = LLVMGetNamedFunction(mod, name);

	if (imported == NULL)
	{
		if (proc != NULL)
			btjit_replace_placeholder(proc, LLVMConstNull(LLVMTypeOf(proc)));
		if (server != NULL)
			btjit_replace_placeholder(server, LLVMConstNull(LLVMTypeOf(server)));
		return true;
	}
	if (proc == NULL || server == NULL)
		return false;
	btjit_replace_placeholder(proc, imported);
	{
		LLVMValueRef existing = LLVMGetNamedGlobal(mod, sym);
		LLVMValueRef fn = LLVMGetNamedFunction(mod, sym);

		if (existing != NULL)
			return false;		/* a variable of that name: not ours */
		if (fn == NULL)
		{
			/* the server's function, resolved at link time */
			fn = LLVMAddFunction(mod, sym, LLVMGlobalGetValueType(server));
			LLVMSetLinkage(fn, LLVMExternalLinkage);
		}
		btjit_replace_placeholder(server, fn);
	}
	return true;
}

/*
 * What one specialisation works from: the shape, the template and the
 * server's bitcode to import from, the names the object's entries get, and
 * refuse_all, NULL or the reason every import is refused (the second try).
 */
typedef struct BtjitSpecialiseInput
{
	const BtjitShape *shape;
	const BtjitTemplate *tmpl;
	const BtjitServerBitcode *bc;
	const BtjitObjectNames *names;
	const char *refuse_all;
} BtjitSpecialiseInput;

/*
 * Import what the shape's called columns name, into mod, and record each
 * column's tier in bcinfo (BTJIT_MAX_KEYS characters, then the first
 * refusal's reason); *bound is the shape the template is to see, without
 * the imports that were refused.  refuse_all, if set, refuses every import
 * with that reason (the retry after a failed link).  Returns false if mod
 * was broken by a failed link.
 */
static bool
btjit_bc_import_all(LLVMModuleRef mod, const BtjitSpecialiseInput *in,
					BtjitShape *bound, BtjitCompileOutput *out, BtjitWhy *why)
{
	const BtjitShape *shape = in->shape;
	LLVMValueRef imported[BTJIT_MAX_KEYS] = {0};
	char		tiers[BTJIT_MAX_KEYS + 1];
	char		first[256] = "";

	*bound = *shape;
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const char *sym = shape->cols[i].bcsym;
		BtjitWhy	iwhy;
		bool		broken = false;

		tiers[i] = BTJIT_BC_NONE;
		if (i >= shape->nkeys || sym[0] == '\0')
			continue;

		/* a second column with the same proc shares the first's copy */
		for (int j = 0; j < i; j++)
			if (imported[j] != NULL && strcmp(shape->cols[j].bcsym, sym) == 0)
				imported[i] = imported[j];
		if (imported[i] == NULL)
		{
			if (in->refuse_all != NULL)
				btjit_why_copy(&iwhy, in->refuse_all);
			else
				imported[i] = btjit_bc_import(mod, in->bc, sym, &broken, &iwhy);
			if (broken)
			{
				btjit_why_copy(why, iwhy.text);
				return false;
			}
		}
		if (imported[i] != NULL)
			tiers[i] = BTJIT_BC_IMPORTED;
		else
		{
			tiers[i] = BTJIT_BC_REFUSED;
			memset(bound->cols[i].bcsym, 0, BTJIT_BCSYM_LEN);
			if (first[0] == '\0')
				strlcpy(first, iwhy.text, sizeof(first));
		}
	}
	tiers[BTJIT_MAX_KEYS] = '\0';
	snprintf(out->code.bcinfo, sizeof(out->code.bcinfo), "%s%s", tiers, first);

	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
		if (!btjit_bind_placeholders(mod, i, imported[i], shape->cols[i].bcsym))
		{
			btjit_why_set(why, "the template cannot take the import of %s",
						  shape->cols[i].bcsym);
			return false;
		}
	return true;
}

/*
 * The object's record of its tiers: a function named name returning the
 * string bcinfo, for backends that link the object from the cache.
 */
static void
btjit_add_bcinfo_function(LLVMModuleRef mod, const char *name,
						  const char *bcinfo)
{
	LLVMTypeRef i8p = LLVMPointerType(LLVMInt8TypeInContext(btjit_context), 0);
	LLVMValueRef str = LLVMConstStringInContext(btjit_context, bcinfo,
												strlen(bcinfo), false);
	LLVMValueRef g = LLVMAddGlobal(mod, LLVMTypeOf(str), "btjit_bcinfo_text");
	LLVMValueRef fn = LLVMAddFunction(mod, name,
									  LLVMFunctionType(i8p, NULL, 0, false));
	LLVMBuilderRef b = LLVMCreateBuilderInContext(btjit_context);

	LLVMSetInitializer(g, str);
	LLVMSetGlobalConstant(g, true);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(btjit_context, fn, "entry"));
	LLVMBuildRet(b, LLVMConstPointerCast(g, i8p));
	LLVMDisposeBuilder(b);
}


/*
 * Give the template's shape parameter the shape (with the imports' tiers
 * bound) as its constant initializer.  False with why if the template's
 * shape type is not the module's.
 */
static bool
btjit_bind_shape(LLVMModuleRef mod, const BtjitShape *bound,
				 BtjitWhy *why)
{
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
	LLVMValueRef shape_global = LLVMGetNamedGlobal(mod, BTJIT_TEMPLATE_SHAPE);
	LLVMTypeRef shape_type = LLVMGlobalGetValueType(shape_global);
	LLVMValueRef init;

	if (LLVMABISizeOfType(td, shape_type) != sizeof(BtjitShape))
	{
		btjit_why_set(why,
					  "template's shape type is %lu bytes, the module's is %zu: template and module were built from different sources",
					  (unsigned long) LLVMABISizeOfType(td, shape_type),
					  sizeof(BtjitShape));
		return false;
	}
	init = btjit_const_from_bytes(td, shape_type, (const unsigned char *) bound);
	if (init == NULL)
	{
		btjit_why_set(why, "template's shape type has an unexpected layout");
		return false;
	}
	LLVMSetInitializer(shape_global, init);
	LLVMSetGlobalConstant(shape_global, true);
	LLVMSetLinkage(shape_global, LLVMPrivateLinkage);
	return true;
}

/*
 * The template's functions listed in btjit_inline_after_bind[] (its
 * BTJIT_INLINE_AFTER_BIND): clang kept them out of line so that the
 * template carries one copy of each, not one per call site; with the shape
 * bound, noinline becomes alwaysinline, and the list goes.  Each element is
 * the function itself, or (LLVM 14's typed pointers) a cast of it.
 */
static void
btjit_bind_late_inlines(LLVMModuleRef mod)
{
	LLVMValueRef list = LLVMGetNamedGlobal(mod, BTJIT_TEMPLATE_LATE_INLINES);
	LLVMValueRef init;
	unsigned	noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	unsigned	always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);

	if (list == NULL)
		return;
	init = LLVMGetInitializer(list);
	for (int i = 0; init != NULL && i < LLVMGetNumOperands(init); i++)
	{
		LLVMValueRef fn = LLVMGetOperand(init, i);

		if (LLVMIsAConstantExpr(fn))
			fn = LLVMGetOperand(fn, 0);
		if (LLVMIsAFunction(fn) == NULL || LLVMIsDeclaration(fn))
			continue;
		LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
									   noinline);
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
								LLVMCreateEnumAttribute(btjit_context, always, 0));
	}
	LLVMDeleteGlobal(list);
}

/*
 * Only the entry points stay visible, under the object's names; everything
 * else becomes internal and may be inlined.  The server's functions
 * imported for inlining stay available_externally: where not inlined, they
 * are the server's, never a private copy.  The object also gets its tiers'
 * function.
 */
static void
btjit_name_entry(LLVMModuleRef mod, const char *template_name,
				 const char *object_name)
{
	LLVMValueRef entry = LLVMGetNamedFunction(mod, template_name);

	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, object_name, strlen(object_name));
}

static void
btjit_name_entries(LLVMModuleRef mod, const BtjitObjectNames *names,
				   const char *bcinfo)
{
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f != NULL;
		 f = LLVMGetNextFunction(f))
	{
		if (!LLVMIsDeclaration(f) &&
			LLVMGetLinkage(f) != LLVMAvailableExternallyLinkage)
			LLVMSetLinkage(f, LLVMInternalLinkage);
	}
	btjit_add_bcinfo_function(mod, names->bcinfo, bcinfo);
	btjit_name_entry(mod, BTJIT_TEMPLATE_ENTRY, names->search);
	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const char *entry = btjit_target_info(t)->template_entry;

		if (entry != NULL)
			btjit_name_entry(mod, entry, names->entries[t]);
	}
	LLVMSetTarget(mod, LLVMGetTargetMachineTriple(btjit_target_machine));
}

/*
 * Linked server code: make sure the result is sound before optimising.
 * False with why if a module with an imported column does not verify.
 */
static bool
btjit_verify_imports(LLVMModuleRef mod, const char *bcinfo,
					 BtjitWhy *why)
{
	const char *imported = strchr(bcinfo, BTJIT_BC_IMPORTED);
	char	   *msg = NULL;
	bool		ok;

	if (imported == NULL || imported >= bcinfo + BTJIT_MAX_KEYS)
		return true;
	ok = !LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
	if (!ok)
		btjit_why_set(why, "the module with imported code does not verify: %.200s",
					  msg ? msg : "");
	LLVMDisposeMessage(msg);
	return ok;
}

/* The optimisation pipeline (BTJIT_PASSES); false with why on an error. */
static bool
btjit_optimise(LLVMModuleRef mod, BtjitWhy *why)
{
	LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(mod, BTJIT_PASSES, btjit_target_machine,
									 options);

	LLVMDisposePassBuilderOptions(options);
	if (err == NULL)
		return true;
	btjit_take_error(err, "optimisation failed", why);
	return false;
}

/*
 * Parse the template and specialise it for the shape: import, bind the
 * constant, name the entries, internalise the rest and optimise.  Returns
 * true with the module in *modp, or false with why and *modp NULL; with
 * *broken set when the imports broke the module (the caller then tries
 * again with every import refused).  *modp is set as soon as the module
 * exists, so that a caller's PG_FINALLY can dispose of it if an ERROR (a
 * failed palloc) interrupts the specialisation.
 */
static bool
btjit_specialise_once(const BtjitSpecialiseInput *in,
					  LLVMModuleRef volatile *modp, bool *broken,
					  BtjitCompileOutput *out, BtjitWhy *why)
{
	const char *bcinfo = out->code.bcinfo;
	LLVMModuleRef mod;
	BtjitShape	bound;

	*modp = NULL;
	*broken = false;
	btjit_phase_begin();
	if (!btjit_llvm_init(why))
		return false;
	btjit_phase_end(BTJIT_PH_INIT);
	mod = btjit_parse_template(in->tmpl, why);
	if (mod == NULL)
		return false;
	*modp = mod;
	btjit_phase_end(BTJIT_PH_PARSE);

	/* tier 2 first: what is refused is unbound from the shape */
	if (!btjit_bc_import_all(mod, in, &bound, out, why))
	{
		*broken = true;
		goto fail;
	}
	btjit_phase_end(BTJIT_PH_IMPORT);

	if (!btjit_bind_shape(mod, &bound, why))
		goto fail;
	btjit_bind_late_inlines(mod);
	btjit_name_entries(mod, in->names, bcinfo);
	if (!btjit_verify_imports(mod, bcinfo, why))
	{
		*broken = true;
		goto fail;
	}
	btjit_phase_end(BTJIT_PH_BIND);

	if (!btjit_optimise(mod, why))
	{
		btjit_phase_end(BTJIT_PH_OPT);
		goto fail;
	}
	btjit_phase_end(BTJIT_PH_OPT);
	return true;

fail:
	LLVMDisposeModule(mod);
	*modp = NULL;
	return false;
}

/*
 * btjit_specialise_once with the shape's imports; if importing broke the
 * module (a failed link, say), once more with every import refused, so that
 * the columns are called rather than the whole shape failing.
 */
static bool
btjit_specialise(const BtjitCompileRequest *request,
				 LLVMModuleRef volatile *modp, BtjitCompileOutput *out,
				 BtjitWhy *why)
{
	BtjitSpecialiseInput in = {request->shape, request->tmpl, request->bc,
	request->names, NULL};
	bool		broken;
	BtjitWhy	bwhy;

	if (btjit_specialise_once(&in, modp, &broken, out, why))
		return true;
	if (!broken)
		return false;
	btjit_why_copy(&bwhy, why->text);
	in.refuse_all = bwhy.text;
	return btjit_specialise_once(&in, modp, &broken, out, why);
}

/* Look up one linked symbol; NULL error if found. */
static LLVMErrorRef
btjit_lookup(const char *name, void **addr)
{
	LLVMOrcJITTargetAddress a = 0;
	LLVMErrorRef err = LLVMOrcLLJITLookup(btjit_lljit, &a, name);

	*addr = (void *) (uintptr_t) a;
	return err;
}

/* Add an object to the LLJIT (which takes the buffer) and find its entries. */
static bool
btjit_link_object(LLVMMemoryBufferRef object, const BtjitObjectNames *names,
				  BtjitLinkedCode *code, BtjitWhy *why)
{
	LLVMErrorRef err;
	void	   *search = NULL;

	err = LLVMOrcLLJITAddObjectFile(btjit_lljit,
									LLVMOrcLLJITGetMainJITDylib(btjit_lljit),
									object);
	if (err != NULL)
	{
		btjit_take_error(err, "could not add object to LLJIT", why);
		return false;
	}
	err = btjit_lookup(names->search, &search);
	for (int t = 0; t < BTJIT_NTARGETS && err == NULL; t++)
		if (names->entries[t][0] != '\0')
			err = btjit_lookup(names->entries[t], &code->entries[t]);
	if (err != NULL)
	{
		btjit_take_error(err, "compiled function not found", why);
		return false;
	}
	code->search = (BtjitSearchFn) search;
	return true;
}

/*
 * The guard must be down when the library is entered: if an earlier
 * compile had left it raised, LLVM's handlers would stay ours outside the
 * library.  That is a bug; refuse to compile rather than carry on, and say
 * so in why.
 */
static bool
btjit_guard_is_down(BtjitWhy *why)
{
	int			depth = btjit_llvm_guard_depth();

	if (depth == 0)
		return true;
	btjit_why_set(why,
				  "the LLVM error guard was left raised (depth %d) by an earlier compile in this session",
				  depth);
	return false;
}

/*
 * Compile the request's shape and link it into this backend's LLJIT; hand
 * the object file back as palloc'd bytes for the object cache.  Any
 * failure of LLVM or the template is an outcome with a reason in output.
 * An ERROR raised inside (a failed palloc, or the ERROR test fault)
 * propagates, but only after the PG_FINALLY block has disposed of the
 * module and left the guard: the guard's depth is the same after this
 * function as before, whichever way it returns.
 */
static BtjitCompileOutcome
btjit_llvm_compile_shape(const BtjitCompileRequest *request,
						 BtjitCompileOutput *output)
{
	LLVMModuleRef volatile mod = NULL;
	volatile BtjitCompileOutcome outcome = BTJIT_COMPILE_BAD_TEMPLATE;
	BtjitWhy	why;

	memset(output, 0, sizeof(*output));
	why.text[0] = '\0';
	if (!btjit_guard_is_down(&why))
	{
		strlcpy(output->reason, why.text, sizeof(output->reason));
		return output->outcome = BTJIT_COMPILE_GUARD_RAISED;
	}

	memset(btjit_phase_ms, 0, sizeof(btjit_phase_ms));
	INSTR_TIME_SET_CURRENT(btjit_compile_start);
	btjit_llvm_enter_guard();
	PG_TRY();
	{
		char	   *error = NULL;
		LLVMMemoryBufferRef object;

		btjit_context_create();

		if (!btjit_specialise(request, &mod, output, &why))
			goto done;

		/* test hooks: fail here, with a module alive, inside the guard */
		if (request->fault == BTJIT_COMPILE_FAULT_ERROR)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: injected fault while compiling key shape"),
					 errdetail_internal("btree_jit.compile_fault is \"error\".")));
		if (request->fault == BTJIT_COMPILE_FAULT_LLVM_FATAL)
			btjit_llvm_raise_fatal_error("injected fault (btree_jit.compile_fault is \"llvm_fatal\")");

		btjit_phase_begin();
		outcome = BTJIT_COMPILE_CODEGEN_FAILED;
		if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
												LLVMObjectFile, &error, &object))
		{
			btjit_why_set(&why, "code generation failed: %s", error);
			LLVMDisposeMessage(error);
			goto done;
		}
		LLVMDisposeModule(mod);
		mod = NULL;
		btjit_phase_end(BTJIT_PH_CODEGEN);

		/* copied before the LLJIT takes the buffer */
		outcome = BTJIT_COMPILE_NO_MEMORY;
		output->objlen = LLVMGetBufferSize(object);
		output->object = palloc_extended(output->objlen, MCXT_ALLOC_NO_OOM);
		if (output->object == NULL)
		{
			btjit_why_set(&why, "out of memory");
			LLVMDisposeMemoryBuffer(object);
			goto done;
		}
		memcpy(output->object, LLVMGetBufferStart(object), output->objlen);
		outcome = BTJIT_COMPILE_LINK_FAILED;
		if (btjit_link_object(object, request->names, &output->code,
							  &why))
			outcome = BTJIT_COMPILED;
		else
		{
			pfree(output->object);
			output->object = NULL;
		}
		btjit_phase_end(BTJIT_PH_LINK);
done:
		;
	}
	PG_FINALLY();
	{
		if (mod != NULL)
			LLVMDisposeModule(mod);
		btjit_context_dispose();
		btjit_llvm_leave_guard();
	}
	PG_END_TRY();
	if (outcome == BTJIT_COMPILED)
		btjit_phase_report(request->names->key);
	else
		strlcpy(output->reason, why.text, sizeof(output->reason));
	return output->outcome = outcome;
}

/*
 * The optimised IR or the machine code for a shape, as palloc'd text; for
 * btree_jit_explain().  Raises an error if the shape cannot be compiled;
 * whichever way it returns, LLVM's objects are disposed of and the guard
 * left (PG_FINALLY).
 */
static char *
btjit_llvm_explain_shape(const BtjitShape *shape, const BtjitTemplate *tmpl,
						 const BtjitServerBitcode *bc, bool assembly)
{
	BtjitObjectNames names;
	BtjitCompileRequest request = {shape, tmpl, bc, &names, BTJIT_COMPILE_NORMAL};
	BtjitCompileOutput out;
	BtjitWhy	why;
	LLVMModuleRef volatile mod = NULL;
	LLVMMemoryBufferRef volatile buf = NULL;
	char	   *volatile text = NULL;
	char	   *volatile result = NULL;

	memset(&names, 0, sizeof(names));
	memset(&out, 0, sizeof(out));
	strlcpy(names.key, "explained", sizeof(names.key));
	strlcpy(names.search, "btjit_search_explained", sizeof(names.search));
	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const BtjitTargetInfo *info = btjit_target_info(t);

		if (info->template_entry != NULL)
			snprintf(names.entries[t], sizeof(names.entries[t]), "%sexplained%s",
					 info->object_prefix, info->object_suffix);
	}
	strlcpy(names.bcinfo, "btjit_search_explained_bc", sizeof(names.bcinfo));

	if (!btjit_guard_is_down(&why))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: could not compile the key shape"),
				 errdetail_internal("%s", why.text)));

	btjit_llvm_enter_guard();
	PG_TRY();
	{
		btjit_context_create();
		if (!btjit_specialise(&request, &mod, &out, &why))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: could not compile the key shape"),
					 errdetail_internal("%s", why.text)));

		if (assembly)
		{
			char	   *error = NULL;
			LLVMMemoryBufferRef asmbuf;

			if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
													LLVMAssemblyFile, &error,
													&asmbuf))
			{
				btjit_why_copy(&why, error);
				LLVMDisposeMessage(error);
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("btree_jit: could not generate machine code"),
						 errdetail_internal("%s", why.text)));
			}
			buf = asmbuf;
			result = pnstrdup(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
		}
		else
		{
			text = LLVMPrintModuleToString(mod);
			result = pstrdup(text);
		}
	}
	PG_FINALLY();
	{
		if (buf != NULL)
			LLVMDisposeMemoryBuffer(buf);
		if (text != NULL)
			LLVMDisposeMessage(text);
		if (mod != NULL)
			LLVMDisposeModule(mod);
		btjit_context_dispose();
		btjit_llvm_leave_guard();
	}
	PG_END_TRY();
	return result;
}

/*
 * The library's two entry points, found by name by compile/compiler_lib.c:
 * its identity (compiler.h, BTJIT_COMPILER_ABI), asked first, and the
 * interface, only if the identity is the module's.
 */
extern __attribute__((visibility("default"))) const char *btjit_compiler_abi(uint64 *layout);
extern __attribute__((visibility("default"))) void btjit_compiler_init(BtjitCompiler *compiler);

const char *
btjit_compiler_abi(uint64 *layout)
{
	*layout = btjit_abi_layout();
	return BTJIT_VERSION;
}

void
btjit_compiler_init(BtjitCompiler *compiler)
{
	compiler->compile_shape = btjit_llvm_compile_shape;
	compiler->explain_shape = btjit_llvm_explain_shape;
}
