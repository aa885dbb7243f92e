/*-------------------------------------------------------------------------
 *
 * llvm_error.cpp
 *	  Turn LLVM's fatal errors and allocation failures into a clean FATAL.
 *
 * By default LLVM aborts the process on a fatal error or a failed
 * allocation, which the postmaster treats as a crash of the whole server.
 * While btree_jit is inside LLVM we install handlers that end only this
 * session, through ereport(FATAL), so that locks, buffers and shared state
 * are released as on any other FATAL.  The LLVM C API has no entry point for
 * these handlers, hence this small C++ file.
 *
 * Outside our guard the handlers of whoever else uses LLVM in the process
 * (the server's own llvmjit) are left alone.
 *
 *-------------------------------------------------------------------------
 */
extern "C"
{
#include "postgres.h"
}

#include <new>

#include <llvm/Support/ErrorHandling.h>

extern "C"
{
#include "btree_jit.h"
}

static int	btjit_guard_depth = 0;
static std::new_handler btjit_saved_new_handler = NULL;

static void
btjit_new_handler(void)
{
	ereport(FATAL,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("btree_jit: out of memory in LLVM"),
			 errdetail("An allocation failed while compiling a B-tree page search.")));
}

static void
btjit_bad_alloc_handler(void *user_data, const char *reason,
						bool gen_crash_diag)
{
	ereport(FATAL,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("btree_jit: out of memory in LLVM"),
			 errdetail("%s", reason)));
}

static void
btjit_fatal_error_handler(void *user_data, const char *reason,
						  bool gen_crash_diag)
{
	ereport(FATAL,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: fatal error in LLVM"),
			 errdetail("%s", reason)));
}

void
btjit_llvm_enter_guard(void)
{
	if (btjit_guard_depth++ > 0)
		return;
	btjit_saved_new_handler = std::set_new_handler(btjit_new_handler);
	llvm::install_bad_alloc_error_handler(btjit_bad_alloc_handler);
	llvm::install_fatal_error_handler(btjit_fatal_error_handler);
}

void
btjit_llvm_leave_guard(void)
{
	Assert(btjit_guard_depth > 0);
	if (--btjit_guard_depth > 0)
		return;
	std::set_new_handler(btjit_saved_new_handler);
	llvm::remove_bad_alloc_error_handler();
	llvm::remove_fatal_error_handler();
}
