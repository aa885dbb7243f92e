/*-------------------------------------------------------------------------
 *
 * bcimport.h
 *	  Import a function's body from the server's bitcode (bcimport.c,
 *	  llvm_bitcode.cpp): the rules that decide whether it may be imported,
 *	  and the preparation of its module for linking.
 *
 * Plain C over LLVM's C API, with no PostgreSQL dependency: the compiler
 * (specialise.c) uses it inside the server, and test/bcimport/ checks the
 * rules on fixtures and measures them on the server's B-tree procs outside
 * it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTJIT_BCIMPORT_H
#define BTJIT_BCIMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Core.h>

#include "why.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* A parsed postgres.index.bc (llvm_bitcode.cpp). */
typedef void *BtjitBcIndex;

extern BtjitBcIndex btjit_bc_index_parse(const char *data, size_t len,
										 BtjitWhy *why);
extern void btjit_bc_index_free(BtjitBcIndex index);
extern bool btjit_bc_index_module(BtjitBcIndex index, const char *sym,
								  char *path, size_t pathlen);
extern void btjit_bc_delete_body(LLVMValueRef fn);

/*
 * Whether the running process defines an external symbol (non-NULL: yes).
 * The server resolves with dlsym(); the checker with a list.
 */
typedef const void *(*BtjitBcResolve) (const char *name);

/*
 * Decide whether sym, defined in src, may be imported, and if so prepare
 * src for LLVMLinkModules2: sym's body is renamed newname (external, so
 * that the linker takes it; the caller makes it internal afterwards), the
 * internal functions and constant data it needs are kept for the linker to
 * copy, external functions of src that may be inlined too are kept as
 * available_externally, and every other definition becomes a declaration
 * of the server's symbol.  Returns false with why if sym may not be
 * imported; src is unchanged then.  *ninstr is the size of sym's own body
 * (instructions), for the caller's inlining decision.
 */
extern bool btjit_bc_prepare(LLVMModuleRef src, const char *sym,
							 const char *newname, BtjitBcResolve resolve,
							 int *ninstr, BtjitWhy *why);

/* Only the decision of btjit_bc_prepare (src is left unchanged). */
extern bool btjit_bc_check(LLVMModuleRef src, const char *sym,
						   BtjitBcResolve resolve, int *ninstr,
						   BtjitWhy *why);

#ifdef __cplusplus
}
#endif

#endif							/* BTJIT_BCIMPORT_H */
