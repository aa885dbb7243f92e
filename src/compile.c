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
 * own and make everything else internal, optimise at O3 (the shape tests
 * fold, the column loops unroll), emit an object file and add it to the
 * LLJIT.
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
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "btree_jit.h"

#define BTJIT_TEMPLATE_FILE "btree_jit/search_template.bc"
#define BTJIT_TEMPLATE_ENTRY "btjit_search"
#define BTJIT_TEMPLATE_SHAPE "btjit_shape_param"

static bool btjit_llvm_ready = false;
static LLVMContextRef btjit_context = NULL;
static LLVMTargetMachineRef btjit_target_machine = NULL;
static LLVMOrcLLJITRef btjit_lljit = NULL;
static LLVMModuleRef btjit_template = NULL;
static char btjit_template_loaded[MAXPGPATH];
static int	btjit_function_counter = 0;

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

	btjit_context = LLVMContextCreate();
	btjit_llvm_ready = true;
	return true;
}

/* Parse the template bitcode, once per backend (again if the path changed). */
static bool
btjit_load_template(char *why, size_t whylen)
{
	char		path[MAXPGPATH];
	char	   *error = NULL;
	LLVMMemoryBufferRef buf;

	btjit_template_file(path);
	if (btjit_template != NULL && strcmp(path, btjit_template_loaded) == 0)
		return true;
	if (btjit_template != NULL)
	{
		LLVMDisposeModule(btjit_template);
		btjit_template = NULL;
	}

	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &error))
	{
		snprintf(why, whylen, "could not read template \"%s\": %s", path, error);
		LLVMDisposeMessage(error);
		return false;
	}
	if (LLVMParseBitcodeInContext2(btjit_context, buf, &btjit_template))
	{
		snprintf(why, whylen, "template \"%s\" is not valid bitcode", path);
		LLVMDisposeMemoryBuffer(buf);
		btjit_template = NULL;
		return false;
	}
	LLVMDisposeMemoryBuffer(buf);

	if (LLVMGetNamedFunction(btjit_template, BTJIT_TEMPLATE_ENTRY) == NULL ||
		LLVMGetNamedGlobal(btjit_template, BTJIT_TEMPLATE_SHAPE) == NULL)
	{
		snprintf(why, whylen, "template \"%s\" lacks %s or %s", path,
				 BTJIT_TEMPLATE_ENTRY, BTJIT_TEMPLATE_SHAPE);
		LLVMDisposeModule(btjit_template);
		btjit_template = NULL;
		return false;
	}
	strlcpy(btjit_template_loaded, path, sizeof(btjit_template_loaded));
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
				 char *why, size_t whylen)
{
	LLVMModuleRef mod;
	LLVMValueRef shape_global;
	LLVMValueRef entry;
	LLVMTypeRef shape_type;
	LLVMTargetDataRef td;
	LLVMValueRef init;
	LLVMPassBuilderOptionsRef options;
	LLVMErrorRef err;

	if (!btjit_llvm_init(why, whylen) || !btjit_load_template(why, whylen))
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

	LLVMSetTarget(mod, LLVMGetTargetMachineTriple(btjit_target_machine));

	options = LLVMCreatePassBuilderOptions();
	err = LLVMRunPasses(mod, "default<O3>", btjit_target_machine, options);
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
 * Compile shape into code->fn.  Returns false with why[] on any failure;
 * never raises an error for LLVM's or the template's sake.
 */
bool
btjit_compile_shape(const BtjitShape *shape, BtjitCode *code,
					char *why, size_t whylen)
{
	char		fname[64];
	char	   *error = NULL;
	LLVMModuleRef mod;
	LLVMMemoryBufferRef object;
	LLVMErrorRef err;
	LLVMOrcJITTargetAddress addr = 0;
	instr_time	start,
				duration;
	bool		ok = false;

	INSTR_TIME_SET_CURRENT(start);
	snprintf(fname, sizeof(fname), "btjit_search_%08x_%d", code->hash,
			 ++btjit_function_counter);

	btjit_llvm_enter_guard();
	mod = btjit_specialise(shape, fname, why, whylen);
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

	/* The LLJIT takes ownership of the object buffer. */
	err = LLVMOrcLLJITAddObjectFile(btjit_lljit,
									LLVMOrcLLJITGetMainJITDylib(btjit_lljit),
									object);
	if (err != NULL)
	{
		btjit_take_error(err, "could not add object to LLJIT", why, whylen);
		goto done;
	}
	err = LLVMOrcLLJITLookup(btjit_lljit, &addr, fname);
	if (err != NULL)
	{
		btjit_take_error(err, "compiled function not found", why, whylen);
		goto done;
	}
	code->fn = (BtjitSearchFn) (uintptr_t) addr;
	ok = true;

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
	mod = btjit_specialise(shape, "btjit_search_explained", why, sizeof(why));
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
