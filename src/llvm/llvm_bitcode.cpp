/*-------------------------------------------------------------------------
 *
 * llvm_bitcode.cpp
 *	  The two things bitcode import (bcimport.c) needs that LLVM's C API
 *	  does not offer: reading the server's summary index, and turning a
 *	  function definition into a declaration.
 *
 * postgres.index.bc, beside the server's bitcode, is a combined module
 * summary index: for each global symbol of the server, the summaries of its
 * definitions, each naming the module file that holds it.  The C API reads
 * modules but not summary indexes.  Nor can it drop a function's body: that
 * needs Function::deleteBody, which also lets go of every reference the
 * body held, so that what it referred to is no longer dragged along when
 * the module is linked.
 *
 * Plain C++ over LLVM, with C linkage and no PostgreSQL dependency, so that
 * the importability checker (test/bcimport) links it outside the server.
 * Failures come back as text; nothing here throws (-fno-exceptions).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>
/* LLVM 14's ModuleSummaryIndex.h trips gcc's -Wuninitialized; not ours */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalValue.h>
#include <llvm/IR/ModuleSummaryIndex.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#pragma GCC diagnostic pop

#include "bcimport.h"

/* Parse a summary index from the bytes of postgres.index.bc. */
extern "C" BtjitBcIndex
btjit_bc_index_parse(const char *data, size_t len, BtjitWhy *why)
{
	llvm::MemoryBufferRef buf(llvm::StringRef(data, len), "postgres.index.bc");
	llvm::Expected<std::unique_ptr<llvm::ModuleSummaryIndex>> index =
		llvm::getModuleSummaryIndex(buf);

	if (!index)
	{
		std::string msg = llvm::toString(index.takeError());

		snprintf(why->text, sizeof(why->text), "not a summary index: %s",
				 msg.c_str());
		return NULL;
	}
	return (BtjitBcIndex) index->release();
}

extern "C" void
btjit_bc_index_free(BtjitBcIndex index)
{
	delete (llvm::ModuleSummaryIndex *) index;
}

/*
 * The module (a path relative to the bitcode directory) that defines the
 * external symbol sym, or false if the index has no single definition of
 * it.
 */
extern "C" bool
btjit_bc_index_module(BtjitBcIndex index, const char *sym, char *path,
					  size_t pathlen)
{
	llvm::ModuleSummaryIndex *ix = (llvm::ModuleSummaryIndex *) index;
#if LLVM_VERSION_MAJOR >= 21
	llvm::GlobalValue::GUID guid =
		llvm::GlobalValue::getGUIDAssumingExternalLinkage(sym);
#else
	llvm::GlobalValue::GUID guid = llvm::GlobalValue::getGUID(sym);
#endif
	llvm::ValueInfo vi = ix->getValueInfo(guid);
	llvm::StringRef found;

	if (!vi)
		return false;
	for (const auto &summary : vi.getSummaryList())
	{
		llvm::StringRef m = summary->modulePath();

		/* a GUID shared by two definitions: refuse rather than pick */
		if (!found.empty() && found != m)
			return false;
		found = m;
	}
	if (found.empty() || found.size() >= pathlen)
		return false;
	memcpy(path, found.data(), found.size());
	path[found.size()] = '\0';
	return true;
}

/* Make a function definition a declaration (external linkage). */
extern "C" void
btjit_bc_delete_body(LLVMValueRef fn)
{
	llvm::unwrap<llvm::Function>(fn)->deleteBody();
}
