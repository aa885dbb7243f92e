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
 * The object file is also handed back to compile_loader.c, which stores
 * it in the object cache (objcache.c): later backends link it from there
 * without loading LLVM at all.
 *
 * This file and llvm_error.cpp are the library btree_jit_llvm.so, the only
 * part of the module that links LLVM; compile_loader.c loads it in a
 * backend's first compile, through btjit_compiler_init().  Its interface
 * with the module is compiler.h, the only header of the module's it
 * includes.
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

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Object.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "fmgr.h"
#include "utils/memutils.h"

#include "compiler.h"

/* Loaded with load_external_function(), which checks for the magic block. */
PG_MODULE_MAGIC;

#define BTJIT_TEMPLATE_ENTRY "btjit_search"
#define BTJIT_TEMPLATE_FUSED "btjit_entry"
#define BTJIT_TEMPLATE_COMPARE "btjit_compare_entry"
#define BTJIT_TEMPLATE_INSERT "btjit_insert_entry"
#define BTJIT_TEMPLATE_SHAPE "btjit_shape_param"

static bool btjit_llvm_ready = false;
static LLVMContextRef btjit_context = NULL;
static LLVMTargetMachineRef btjit_target_machine = NULL;
static LLVMOrcLLJITRef btjit_lljit = NULL;
static LLVMModuleRef btjit_template = NULL;	/* parsed on first compile */
static uint64 btjit_template_hash = 0;	/* of the bytes it was parsed from */

/*
 * BTJIT_PASSES (compiler.h) is O2 rather than O3: on the page-search
 * template it produces the same hot loops, and compiles about a third
 * faster.
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

/* Copy an LLVM error's message into why[] and free the error. */
static void
btjit_take_error(LLVMErrorRef err, const char *what, char *why, size_t whylen)
{
	char	   *msg = LLVMGetErrorMessage(err);

	snprintf(why, whylen, "%s: %s", what, msg);
	LLVMDisposeErrorMessage(msg);
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

/* Parse the template, unless the bytes are those parsed last time. */
static bool
btjit_parse_template(const BtjitTemplate *tmpl, char *why, size_t whylen)
{
	LLVMMemoryBufferRef view;

	if (btjit_template != NULL && btjit_template_hash == tmpl->hash)
		return true;
	if (btjit_template != NULL)
		LLVMDisposeModule(btjit_template);
	btjit_template = NULL;

	/* The parser consumes its buffer; give it a view of the bytes. */
	view = LLVMCreateMemoryBufferWithMemoryRange(tmpl->data, tmpl->len,
												 "btree_jit template", false);
	btjit_llvm_diagnostic[0] = '\0';
	if (LLVMParseBitcodeInContext2(btjit_context, view, &btjit_template))
	{
		snprintf(why, whylen, "template \"%s\" is not valid bitcode: %s",
				 tmpl->path,
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
				 tmpl->path, BTJIT_TEMPLATE_ENTRY,
				 BTJIT_TEMPLATE_FUSED, BTJIT_TEMPLATE_COMPARE,
				 BTJIT_TEMPLATE_SHAPE);
		LLVMDisposeModule(btjit_template);
		btjit_template = NULL;
		return false;
	}
	btjit_template_hash = tmpl->hash;
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
 * the entry function, internalise the rest and optimise.  Returns true with
 * the module in *modp, or false with why[] and *modp NULL.  *modp is set as
 * soon as the clone exists, so that a caller's PG_FINALLY can dispose of it
 * if an ERROR (a failed palloc) interrupts the specialisation.
 */
static bool
btjit_specialise(const BtjitShape *shape, const BtjitTemplate *tmpl,
				 const BtjitObjectNames *names, LLVMModuleRef volatile *modp,
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

	*modp = NULL;
	if (!btjit_llvm_init(why, whylen) || !btjit_parse_template(tmpl, why, whylen))
		return false;

	mod = LLVMCloneModule(btjit_template);
	*modp = mod;
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
		*modp = NULL;
		return false;
	}
	init = btjit_const_from_bytes(td, shape_type, (const unsigned char *) shape);
	if (init == NULL)
	{
		snprintf(why, whylen, "template's shape type has an unexpected layout");
		LLVMDisposeModule(mod);
		*modp = NULL;
		return false;
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
	LLVMSetValueName2(entry, names->search, strlen(names->search));
	entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_FUSED);
	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, names->entry, strlen(names->entry));
	entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_COMPARE);
	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, names->compare, strlen(names->compare));
	entry = LLVMGetNamedFunction(mod, BTJIT_TEMPLATE_INSERT);
	LLVMSetLinkage(entry, LLVMExternalLinkage);
	LLVMSetValueName2(entry, names->insert, strlen(names->insert));

	LLVMSetTarget(mod, LLVMGetTargetMachineTriple(btjit_target_machine));

	options = LLVMCreatePassBuilderOptions();
	err = LLVMRunPasses(mod, BTJIT_PASSES, btjit_target_machine, options);
	LLVMDisposePassBuilderOptions(options);
	if (err != NULL)
	{
		btjit_take_error(err, "optimisation failed", why, whylen);
		LLVMDisposeModule(mod);
		*modp = NULL;
		return false;
	}
	return true;
}

/* Add an object to the LLJIT (which takes the buffer) and find its entries. */
static bool
btjit_link_object(LLVMMemoryBufferRef object, const BtjitObjectNames *names,
				  BtjitCode *code, char *why, size_t whylen)
{
	LLVMErrorRef err;
	LLVMOrcJITTargetAddress addr = 0;
	LLVMOrcJITTargetAddress eaddr = 0;
	LLVMOrcJITTargetAddress caddr = 0;
	LLVMOrcJITTargetAddress iaddr = 0;

	err = LLVMOrcLLJITAddObjectFile(btjit_lljit,
									LLVMOrcLLJITGetMainJITDylib(btjit_lljit),
									object);
	if (err != NULL)
	{
		btjit_take_error(err, "could not add object to LLJIT", why, whylen);
		return false;
	}
	err = LLVMOrcLLJITLookup(btjit_lljit, &addr, names->search);
	if (err == NULL)
		err = LLVMOrcLLJITLookup(btjit_lljit, &eaddr, names->entry);
	if (err == NULL)
		err = LLVMOrcLLJITLookup(btjit_lljit, &caddr, names->compare);
	if (err == NULL)
		err = LLVMOrcLLJITLookup(btjit_lljit, &iaddr, names->insert);
	if (err != NULL)
	{
		btjit_take_error(err, "compiled function not found", why, whylen);
		return false;
	}
	code->fn = (BtjitSearchFn) (uintptr_t) addr;
	code->entry = (BtjitEntryFn) (uintptr_t) eaddr;
	code->cmp_entry = (BtjitCompareEntryFn) (uintptr_t) caddr;
	code->ins_entry = (BtjitInsertEntryFn) (uintptr_t) iaddr;
	return true;
}

/*
 * The guard must be down when the library is entered: if an earlier
 * compile had left it raised, LLVM's handlers would stay ours outside the
 * library.  That is a bug; refuse to compile rather than carry on, and say
 * so in why[].
 */
static bool
btjit_guard_is_down(char *why, size_t whylen)
{
	int			depth = btjit_llvm_guard_depth();

	if (depth == 0)
		return true;
	snprintf(why, whylen,
			 "the LLVM error guard was left raised (depth %d) by an earlier compile in this session",
			 depth);
	return false;
}

/*
 * Compile shape into code and link it into this backend's LLJIT; hand the
 * object file back as palloc'd bytes for the object cache.  Returns false
 * with why[] on any failure of LLVM or the template.  An ERROR raised
 * inside (a failed palloc, or the ERROR test fault) propagates, but only
 * after the PG_FINALLY block has disposed of the module and left the
 * guard: the guard's depth is the same after this function as before,
 * whichever way it returns.
 */
static bool
btjit_llvm_compile_shape(const BtjitShape *shape, const BtjitTemplate *tmpl,
						 const BtjitObjectNames *names,
						 BtjitCompileFault fault, BtjitCode *code,
						 char **object_bytes, size_t *object_len,
						 char *why, size_t whylen)
{
	LLVMModuleRef volatile mod = NULL;
	volatile bool ok = false;

	if (!btjit_guard_is_down(why, whylen))
		return false;

	btjit_llvm_enter_guard();
	PG_TRY();
	{
		char	   *error = NULL;
		LLVMMemoryBufferRef object;

		if (!btjit_specialise(shape, tmpl, names, &mod, why, whylen))
			goto done;

		/* test hooks: fail here, with a module alive, inside the guard */
		if (fault == BTJIT_COMPILE_FAULT_ERROR)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: injected fault while compiling key shape"),
					 errdetail_internal("btree_jit.compile_fault is \"error\".")));
		if (fault == BTJIT_COMPILE_FAULT_LLVM_FATAL)
			btjit_llvm_raise_fatal_error("injected fault (btree_jit.compile_fault is \"llvm_fatal\")");

		if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
												LLVMObjectFile, &error, &object))
		{
			snprintf(why, whylen, "code generation failed: %s", error);
			LLVMDisposeMessage(error);
			goto done;
		}
		LLVMDisposeModule(mod);
		mod = NULL;

		/* copied before the LLJIT takes the buffer */
		*object_len = LLVMGetBufferSize(object);
		*object_bytes = palloc_extended(*object_len, MCXT_ALLOC_NO_OOM);
		if (*object_bytes == NULL)
		{
			snprintf(why, whylen, "out of memory");
			LLVMDisposeMemoryBuffer(object);
			goto done;
		}
		memcpy(*object_bytes, LLVMGetBufferStart(object), *object_len);
		ok = btjit_link_object(object, names, code, why, whylen);
		if (!ok)
			pfree(*object_bytes);
done:
		;
	}
	PG_FINALLY();
	{
		if (mod != NULL)
			LLVMDisposeModule(mod);
		btjit_llvm_leave_guard();
	}
	PG_END_TRY();
	return ok;
}

/*
 * The optimised IR or the machine code for a shape, as palloc'd text; for
 * btree_jit_explain().  Raises an error if the shape cannot be compiled;
 * whichever way it returns, LLVM's objects are disposed of and the guard
 * left (PG_FINALLY).
 */
static char *
btjit_llvm_explain_shape(const BtjitShape *shape, const BtjitTemplate *tmpl,
						 bool assembly)
{
	BtjitObjectNames names;
	char		why[256];
	LLVMModuleRef volatile mod = NULL;
	LLVMMemoryBufferRef volatile buf = NULL;
	char	   *volatile text = NULL;
	char	   *volatile result = NULL;

	strlcpy(names.key, "explained", sizeof(names.key));
	strlcpy(names.search, "btjit_search_explained", sizeof(names.search));
	strlcpy(names.entry, "btjit_entry_explained", sizeof(names.entry));
	strlcpy(names.compare, "btjit_search_explained_cmp", sizeof(names.compare));

	if (!btjit_guard_is_down(why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: could not compile the key shape"),
				 errdetail_internal("%s", why)));

	btjit_llvm_enter_guard();
	PG_TRY();
	{
		if (!btjit_specialise(shape, tmpl, &names, &mod, why, sizeof(why)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: could not compile the key shape"),
					 errdetail_internal("%s", why)));

		if (assembly)
		{
			char	   *error = NULL;
			LLVMMemoryBufferRef asmbuf;

			if (LLVMTargetMachineEmitToMemoryBuffer(btjit_target_machine, mod,
													LLVMAssemblyFile, &error,
													&asmbuf))
			{
				strlcpy(why, error, sizeof(why));
				LLVMDisposeMessage(error);
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("btree_jit: could not generate machine code"),
						 errdetail_internal("%s", why)));
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
		btjit_llvm_leave_guard();
	}
	PG_END_TRY();
	return result;
}

/* The library's one entry point, found by name by compile_loader.c. */
extern __attribute__((visibility("default"))) void btjit_compiler_init(BtjitCompiler *compiler);

void
btjit_compiler_init(BtjitCompiler *compiler)
{
	compiler->compile_shape = btjit_llvm_compile_shape;
	compiler->explain_shape = btjit_llvm_explain_shape;
}
