/*-------------------------------------------------------------------------
 *
 * compile.c
 *	  Specialise the bitcode template for one key shape and load the result
 *	  with LLVM ORC.
 *
 * Per backend, on first need (never in the postmaster): one LLVM context
 * holding the parsed template, one target machine for the host, and one
 * LLJIT instance.  Per shape: clone the template, give btjit_shape_param the
 * shape as its constant initializer, give the entry function a name of its
 * own and make everything else internal, optimise (the shape tests
 * fold, the column loops unroll), emit an object file and add it to the
 * LLJIT.
 *
 * Compiled objects are also written to an object cache in the data
 * directory, keyed by everything the machine code depends on (the shape,
 * the template's bytes, the host CPU, the server's major version), and
 * later backends load them instead of compiling: a fresh connection then
 * pays a file read and a link, not an optimisation and code generation.
 *
 * Failures are reported as text, never raised: a shape that cannot be
 * compiled leaves its indexes on the stock path.  LLVM's own fatal errors
 * and allocation failures are turned into a FATAL by llvm_error.cpp, which
 * ends the session cleanly rather than aborting the server.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Object.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "btree_jit.h"

#define BTJIT_TEMPLATE_FILE "btree_jit/search_template.bc"
#define BTJIT_TEMPLATE_ENTRY "btjit_search"
#define BTJIT_TEMPLATE_FUSED "btjit_entry"
#define BTJIT_TEMPLATE_COMPARE "btjit_compare_entry"
#define BTJIT_TEMPLATE_SHAPE "btjit_shape_param"

static bool btjit_llvm_ready = false;
static LLVMContextRef btjit_context = NULL;
static LLVMTargetMachineRef btjit_target_machine = NULL;
static LLVMOrcLLJITRef btjit_lljit = NULL;
static LLVMModuleRef btjit_template = NULL;	/* parsed on first compile */
static LLVMMemoryBufferRef btjit_template_bytes = NULL;
static uint64 btjit_template_hash = 0;
static char btjit_template_loaded[MAXPGPATH];
static char *btjit_host_cpu = NULL;
static char *btjit_host_features = NULL;

#define BTJIT_OBJECT_CACHE_DIR "btree_jit_cache"

/*
 * The optimisation pipeline.  O2 rather than O3: on the page-search
 * template it produces the same hot loops, and compiles about a third
 * faster.  Part of the object cache key, as is this module's version.
 */
#define BTJIT_PASSES "default<O2>"
#define BTJIT_CODEGEN_ID "btree_jit 1.0 " BTJIT_PASSES

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

/* Copy an LLVM error's message into why[] and free the error. */
static void
btjit_take_error(LLVMErrorRef err, const char *what, char *why, size_t whylen)
{
	char	   *msg = LLVMGetErrorMessage(err);

	snprintf(why, whylen, "%s: %s", what, msg);
	LLVMDisposeErrorMessage(msg);
}

static void
btjit_template_file(char *path)
{
	if (btjit_template_path != NULL && btjit_template_path[0] != '\0')
		strlcpy(path, btjit_template_path, MAXPGPATH);
	else
		snprintf(path, MAXPGPATH, "%s/%s", pkglib_path, BTJIT_TEMPLATE_FILE);
}

/* Set up LLVM for this backend: target, target machine, LLJIT. */
static bool
btjit_llvm_init(char *why, size_t whylen)
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
		snprintf(why, whylen, "LLVM has no native target");
		return false;
	}

	triple = LLVMGetDefaultTargetTriple();
	if (LLVMGetTargetFromTriple(triple, &target, &error))
	{
		snprintf(why, whylen, "no LLVM target for %s: %s", triple, error);
		LLVMDisposeMessage(error);
		LLVMDisposeMessage(triple);
		return false;
	}
	cpu = LLVMGetHostCPUName();
	features = LLVMGetHostCPUFeatures();
	btjit_host_cpu = MemoryContextStrdup(TopMemoryContext, cpu);
	btjit_host_features = MemoryContextStrdup(TopMemoryContext, features);
	btjit_target_machine =
		LLVMCreateTargetMachine(target, triple, cpu, features,
								LLVMCodeGenLevelAggressive,
								LLVMRelocDefault, LLVMCodeModelJITDefault);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
	if (btjit_target_machine == NULL)
	{
		snprintf(why, whylen, "could not create an LLVM target machine");
		return false;
	}

	err = LLVMOrcCreateLLJIT(&btjit_lljit, NULL);
	if (err != NULL)
	{
		btjit_take_error(err, "could not create LLJIT", why, whylen);
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
			btjit_take_error(err, "could not create a symbol generator", why, whylen);
			return false;
		}
		LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(btjit_lljit), gen);
	}

	btjit_context = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(btjit_context, btjit_diagnostic_handler, NULL);
	btjit_llvm_ready = true;
	return true;
}

static uint64
btjit_hash_bytes(uint64 h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64CONST(0x100000001b3);
	return h;
}

/*
 * Read the template's bytes, once per backend (again if the path changed),
 * and hash them for the object cache key.  Parsing waits until a shape
 * actually has to be compiled.
 */
static bool
btjit_read_template(char *why, size_t whylen)
{
	char		path[MAXPGPATH];
	char	   *error = NULL;

	btjit_template_file(path);
	if (btjit_template_bytes != NULL && strcmp(path, btjit_template_loaded) == 0)
		return true;
	if (btjit_template != NULL)
		LLVMDisposeModule(btjit_template);
	if (btjit_template_bytes != NULL)
		LLVMDisposeMemoryBuffer(btjit_template_bytes);
	btjit_template = NULL;
	btjit_template_bytes = NULL;
	btjit_template_loaded[0] = '\0';

	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &btjit_template_bytes,
												 &error))
	{
		snprintf(why, whylen, "could not read template \"%s\": %s", path, error);
		LLVMDisposeMessage(error);
		btjit_template_bytes = NULL;
		return false;
	}
	btjit_template_hash =
		btjit_hash_bytes(UINT64CONST(0xcbf29ce484222325),
						 LLVMGetBufferStart(btjit_template_bytes),
						 LLVMGetBufferSize(btjit_template_bytes));
	strlcpy(btjit_template_loaded, path, sizeof(btjit_template_loaded));
	return true;
}

/* Parse the template read by btjit_read_template. */
static bool
btjit_parse_template(char *why, size_t whylen)
{
	LLVMMemoryBufferRef view;

	if (btjit_template != NULL)
		return true;

	/* The parser consumes its buffer; give it a view of ours. */
	view = LLVMCreateMemoryBufferWithMemoryRange(LLVMGetBufferStart(btjit_template_bytes),
												 LLVMGetBufferSize(btjit_template_bytes),
												 "btree_jit template", false);
	btjit_llvm_diagnostic[0] = '\0';
	if (LLVMParseBitcodeInContext2(btjit_context, view, &btjit_template))
	{
		snprintf(why, whylen, "template \"%s\" is not valid bitcode: %s",
				 btjit_template_loaded,
				 btjit_llvm_diagnostic[0] ? btjit_llvm_diagnostic : "unknown error");
		LLVMDisposeMemoryBuffer(view);
		btjit_template = NULL;
		return false;
	}
	LLVMDisposeMemoryBuffer(view);

	if (LLVMGetNamedFunction(btjit_template, BTJIT_TEMPLATE_ENTRY) == NULL ||
		LLVMGetNamedFunction(btjit_template, BTJIT_TEMPLATE_FUSED) == NULL ||
		LLVMGetNamedFunction(btjit_template, BTJIT_TEMPLATE_COMPARE) == NULL ||
		LLVMGetNamedGlobal(btjit_template, BTJIT_TEMPLATE_SHAPE) == NULL)
	{
		snprintf(why, whylen, "template \"%s\" lacks %s, %s, %s or %s",
				 btjit_template_loaded, BTJIT_TEMPLATE_ENTRY,
				 BTJIT_TEMPLATE_FUSED, BTJIT_TEMPLATE_COMPARE,
				 BTJIT_TEMPLATE_SHAPE);
		LLVMDisposeModule(btjit_template);
		btjit_template = NULL;
		return false;
	}
	return true;
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

/*
 * Clone the template and specialise it for shape: bind the constant, name
 * the entry function, internalise the rest and optimise.  Returns the
 * module, or NULL with why[].
 */
static LLVMModuleRef
btjit_specialise(const BtjitShape *shape, const char *fname,
				 const char *ename, char *why, size_t whylen)
{
	LLVMModuleRef mod;
	LLVMValueRef shape_global;
	LLVMValueRef entry;
	LLVMTypeRef shape_type;
	LLVMTargetDataRef td;
	LLVMValueRef init;
	LLVMPassBuilderOptionsRef options;
	LLVMErrorRef err;

	if (!btjit_llvm_init(why, whylen) || !btjit_read_template(why, whylen) ||
		!btjit_parse_template(why, whylen))
		return NULL;

	mod = LLVMCloneModule(btjit_template);
	td = LLVMGetModuleDataLayout(mod);

	shape_global = LLVMGetNamedGlobal(mod, BTJIT_TEMPLATE_SHAPE);
	shape_type = LLVMGlobalGetValueType(shape_global);
	if (LLVMABISizeOfType(td, shape_type) != sizeof(BtjitShape))
	{
		snprintf(why, whylen,
				 "template's shape type is %lu bytes, the module's is %zu: template and module were built from different sources",
				 (unsigned long) LLVMABISizeOfType(td, shape_type),
				 sizeof(BtjitShape));
		LLVMDisposeModule(mod);
		return NULL;
	}
	init = btjit_const_from_bytes(td, shape_type, (const unsigned char *) shape);
	if (init == NULL)
	{
		snprintf(why, whylen, "template's shape type has an unexpected layout");
		LLVMDisposeModule(mod);
		return NULL;
	}
	LLVMSetInitializer(shape_global, init);
	LLVMSetGlobalConstant(shape_global, true);
	LLVMSetLinkage(shape_global, LLVMPrivateLinkage);

	/* Only the entry point stays visible; everything else may be inlined. */
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f != NULL;
		 f = LLVMGetNextFunction(f))
	{
		if (!LLVMIsDeclaration(f))
			LLVMSetLinkage(f, LLVMInternalLinkage);
	}
	entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_ENTRY);
	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, fname, strlen(fname));
	entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_FUSED);
	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, ename, strlen(ename));
	{
		char		cname[80];

		snprintf(cname, sizeof(cname), "%s_cmp", fname);
		entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_COMPARE);
		LLVMSetLinkage(entry, LLVMExternalLinkage);
		LLVMSetValueName2(entry, cname, strlen(cname));
	}

	LLVMSetTarget(mod, LLVMGetTargetMachineTriple(btjit_target_machine));

	options = LLVMCreatePassBuilderOptions();
	err = LLVMRunPasses(mod, BTJIT_PASSES, btjit_target_machine, options);
	LLVMDisposePassBuilderOptions(options);
	if (err != NULL)
	{
		btjit_take_error(err, "optimisation failed", why, whylen);
		LLVMDisposeModule(mod);
		return NULL;
	}
	return mod;
}

/*
 * The object cache key: everything the machine code depends on.  Computed
 * after btjit_llvm_init and btjit_read_template.
 */
static void
btjit_object_key(const BtjitShape *shape, char *key, size_t keylen)
{
	uint64		h = UINT64CONST(0xcbf29ce484222325);
	uint32		version = PG_VERSION_NUM / 100;

	h = btjit_hash_bytes(h, shape, sizeof(BtjitShape));
	h = btjit_hash_bytes(h, &btjit_template_hash, sizeof(btjit_template_hash));
	h = btjit_hash_bytes(h, &version, sizeof(version));
	h = btjit_hash_bytes(h, BTJIT_CODEGEN_ID, strlen(BTJIT_CODEGEN_ID));
	h = btjit_hash_bytes(h, btjit_host_cpu, strlen(btjit_host_cpu));
	h = btjit_hash_bytes(h, btjit_host_features, strlen(btjit_host_features));
	snprintf(key, keylen, "%016llx", (unsigned long long) h);
}

static void
btjit_object_path(const char *key, char *path)
{
	snprintf(path, MAXPGPATH, "%s/%s/%s.o", DataDir, BTJIT_OBJECT_CACHE_DIR, key);
}

/*
 * Whether an object file defines fname.  A cached object is checked before
 * it is added: once added, its symbols stay defined in this backend's
 * LLJIT, so a wrong file could not be taken back.
 */
static bool
btjit_object_defines(LLVMMemoryBufferRef object, const char *fname)
{
	char	   *error = NULL;
	LLVMBinaryRef bin = LLVMCreateBinary(object, btjit_context, &error);
	LLVMSymbolIteratorRef it;
	bool		found = false;

	if (bin == NULL)
	{
		LLVMDisposeMessage(error);
		return false;
	}
	it = LLVMObjectFileCopySymbolIterator(bin);
	if (it != NULL)
	{
		while (!found && !LLVMObjectFileIsSymbolIteratorAtEnd(bin, it))
		{
			const char *name = LLVMGetSymbolName(it);

			found = name != NULL && strcmp(name, fname) == 0;
			LLVMMoveToNextSymbol(it);
		}
		LLVMDisposeSymbolIterator(it);
	}
	LLVMDisposeBinary(bin);
	return found;
}

/* Add an object to the LLJIT (which takes the buffer) and find its entries. */
static bool
btjit_link_object(LLVMMemoryBufferRef object, const char *fname,
				  const char *ename, BtjitCode *code, char *why, size_t whylen)
{
	LLVMErrorRef err;
	LLVMOrcJITTargetAddress addr = 0;
	LLVMOrcJITTargetAddress eaddr = 0;
	LLVMOrcJITTargetAddress caddr = 0;
	char		cname[80];

	err = LLVMOrcLLJITAddObjectFile(btjit_lljit,
									LLVMOrcLLJITGetMainJITDylib(btjit_lljit),
									object);
	if (err != NULL)
	{
		btjit_take_error(err, "could not add object to LLJIT", why, whylen);
		return false;
	}
	snprintf(cname, sizeof(cname), "%s_cmp", fname);
	err = LLVMOrcLLJITLookup(btjit_lljit, &addr, fname);
	if (err == NULL)
		err = LLVMOrcLLJITLookup(btjit_lljit, &eaddr, ename);
	if (err == NULL)
		err = LLVMOrcLLJITLookup(btjit_lljit, &caddr, cname);
	if (err != NULL)
	{
		btjit_take_error(err, "compiled function not found", why, whylen);
		return false;
	}
	code->fn = (BtjitSearchFn) (uintptr_t) addr;
	code->entry = (BtjitEntryFn) (uintptr_t) eaddr;
	code->cmp_entry = (BtjitCompareEntryFn) (uintptr_t) caddr;
	return true;
}

/*
 * Try the object cache.  Any problem (no file, unreadable, does not link)
 * just means compiling afresh.
 */
static bool
btjit_object_cache_load(const char *key, const char *fname, const char *ename,
						BtjitCode *code)
{
	char		path[MAXPGPATH];
	char		why[256];
	char	   *error = NULL;
	LLVMMemoryBufferRef object;

	btjit_object_path(key, path);
	if (access(path, R_OK) != 0)
		return false;
	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &object, &error))
	{
		LLVMDisposeMessage(error);
		return false;
	}
	if (!btjit_object_defines(object, fname))
	{
		LLVMDisposeMemoryBuffer(object);
		ereport(LOG,
				(errmsg("btree_jit: ignoring cached object \"%s\": it does not define %s",
						path, fname)));
		return false;
	}
	if (!btjit_link_object(object, fname, ename, code, why, sizeof(why)))
	{
		ereport(LOG,
				(errmsg("btree_jit: ignoring cached object \"%s\": %s", path, why)));
		return false;
	}
	return true;
}

/*
 * Store an object for later backends: write a private temporary file and
 * rename it into place, so readers see a whole file or none.  Best effort:
 * a full disk or a full cache only costs later backends a compile.
 */
static void
btjit_object_cache_store(const char *key, LLVMMemoryBufferRef object)
{
	char		dir[MAXPGPATH];
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH];
	const char *data = LLVMGetBufferStart(object);
	size_t		len = LLVMGetBufferSize(object);
	int			fd;
	bool		ok;

	snprintf(dir, sizeof(dir), "%s/%s", DataDir, BTJIT_OBJECT_CACHE_DIR);
	if (MakePGDirectory(dir) != 0 && errno != EEXIST)
		return;
	if (btjit_object_cache_max_files > 0)
	{
		DIR		   *d = AllocateDir(dir);
		struct dirent *de;
		int			nfiles = 0;

		while (d != NULL && (de = ReadDirExtended(d, dir, LOG)) != NULL)
			if (strstr(de->d_name, ".o") != NULL)
				nfiles++;
		if (d != NULL)
			FreeDir(d);
		if (nfiles >= btjit_object_cache_max_files)
			return;
	}

	btjit_object_path(key, path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, MyProcPid);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		return;
	ok = (write(fd, data, len) == (ssize_t) len);
	if (CloseTransientFile(fd) != 0)
		ok = false;
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

/*
 * Compile shape into code->fn, or load it from the object cache.  Returns
 * false with why[] on any failure; never raises an error for LLVM's or the
 * template's sake.
 */
bool
btjit_compile_shape(const BtjitShape *shape, BtjitCode *code,
					char *why, size_t whylen)
{
	char		key[32];
	char		fname[64];
	char		ename[64];
	char	   *error = NULL;
	LLVMModuleRef mod;
	LLVMMemoryBufferRef object;
	instr_time	start,
				duration;
	bool		ok = false;

	INSTR_TIME_SET_CURRENT(start);
	btjit_llvm_enter_guard();
	if (!btjit_llvm_init(why, whylen) || !btjit_read_template(why, whylen))
		goto done;

	btjit_object_key(shape, key, sizeof(key));
	snprintf(fname, sizeof(fname), "btjit_search_%s", key);
	snprintf(ename, sizeof(ename), "btjit_entry_%s", key);

	if (btjit_object_cache &&
		btjit_object_cache_load(key, fname, ename, code))
	{
		code->from_object_cache = true;
		ok = true;
		goto done;
	}

	mod = btjit_specialise(shape, fname, ename, why, whylen);
	if (mod == NULL)
		goto done;

	if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
											LLVMObjectFile, &error, &object))
	{
		snprintf(why, whylen, "code generation failed: %s", error);
		LLVMDisposeMessage(error);
		LLVMDisposeModule(mod);
		goto done;
	}
	LLVMDisposeModule(mod);

	if (btjit_object_cache)
		btjit_object_cache_store(key, object);
	ok = btjit_link_object(object, fname, ename, code, why, whylen);

done:
	btjit_llvm_leave_guard();
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	code->compile_ms = INSTR_TIME_GET_MILLISEC(duration);
	return ok;
}

/*
 * The optimised IR or the machine code for a shape, as palloc'd text; for
 * btree_jit_explain().  Raises an error if the shape cannot be compiled.
 */
char *
btjit_explain_shape(const BtjitShape *shape, bool assembly)
{
	char		why[256];
	char	   *text;
	char	   *result;
	char	   *error = NULL;
	LLVMModuleRef mod;

	btjit_llvm_enter_guard();
	mod = btjit_specialise(shape, "btjit_search_explained",
						   "btjit_entry_explained", why, sizeof(why));
	if (mod == NULL)
	{
		btjit_llvm_leave_guard();
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: could not compile the key shape"),
				 errdetail("%s", why)));
	}

	if (assembly)
	{
		LLVMMemoryBufferRef buf;

		if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
												LLVMAssemblyFile, &error, &buf))
		{
			LLVMDisposeModule(mod);
			btjit_llvm_leave_guard();
			snprintf(why, sizeof(why), "%s", error);
			LLVMDisposeMessage(error);
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: could not generate machine code"),
					 errdetail("%s", why)));
		}
		result = pnstrdup(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
		LLVMDisposeMemoryBuffer(buf);
	}
	else
	{
		text = LLVMPrintModuleToString(mod);
		result = pstrdup(text);
		LLVMDisposeMessage(text);
	}
	LLVMDisposeModule(mod);
	btjit_llvm_leave_guard();
	return result;
}
