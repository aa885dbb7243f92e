/*-------------------------------------------------------------------------
 *
 * objload.h
 *	  Link an x86-64 ELF relocatable object, as LLVM emits it for a key
 *	  shape, into executable memory without LLVM (objload.c).
 *
 * Plain C with no PostgreSQL dependency.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTJIT_OBJLOAD_H
#define BTJIT_OBJLOAD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Link the object in image[0..len) and store the addresses of the global
 * functions names[0..nnames) in addrs[].  Undefined symbols are resolved in
 * the running process (dlsym).  Returns false with why[] if the object is
 * malformed, uses anything the loader does not implement, or lacks a name;
 * nothing stays mapped then.  The code stays mapped for the life of the
 * process.
 */
extern bool btjit_object_link(const char *image, size_t len,
							  const char *const *names, void **addrs,
							  int nnames, char *why, size_t whylen);

#endif							/* BTJIT_OBJLOAD_H */
