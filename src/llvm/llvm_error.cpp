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
 * (the server's own llvmjit) are left alone.  That is why every enter must
 * be matched by a leave on every path, an ERROR's included: specialise.c
 * leaves the guard in PG_FINALLY blocks, and refuses to compile if it ever
 * finds the guard raised on entry (see btjit_llvm_guard_depth()).
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
#include "compiler.h"
}

static int	btjit_guard_depth = 0;
static std::new_handler btjit_saved_new_handler = NULL;

/* operator new failed inside LLVM: end the session. */
static void
btjit_new_handler(void)
{
	ereport(FATAL,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("btree_jit: out of memory in LLVM"),
			 errdetail("An allocation failed while compiling a B-tree page search.")));
}

/* LLVM's own allocation failure: end the session. */
static void
btjit_bad_alloc_handler(void *user_data, const char *reason,
						bool gen_crash_diag)
{
	ereport(FATAL,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("btree_jit: out of memory in LLVM"),
			 errdetail_internal("%s", reason)));
}

/* llvm::report_fatal_error() and the like: end the session. */
static void
btjit_fatal_error_handler(void *user_data, const char *reason,
						  bool gen_crash_diag)
{
	ereport(FATAL,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: fatal error in LLVM"),
			 errdetail_internal("%s", reason)));
}

/* Install our handlers, unless an outer guard already did. */
void
btjit_llvm_enter_guard(void)
{
	if (btjit_guard_depth++ > 0)
		return;
	btjit_saved_new_handler = std::set_new_handler(btjit_new_handler);
	llvm::install_bad_alloc_error_handler(btjit_bad_alloc_handler);
	llvm::install_fatal_error_handler(btjit_fatal_error_handler);
}

/* Restore the handlers found on entry when the outermost guard is left. */
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

/* How many guards are entered and not left; 0 outside the library. */
int
btjit_llvm_guard_depth(void)
{
	return btjit_guard_depth;
}

/*
 * Test hook (btree_jit.compile_fault = llvm_fatal): raise an LLVM fatal
 * error, as LLVM itself would on an internal failure.  Inside the guard it
 * ends the session with FATAL; outside it LLVM would abort the process.
 */
void
btjit_llvm_raise_fatal_error(const char *reason)
{
	llvm::report_fatal_error(reason, false);
}
