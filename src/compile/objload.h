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

/* An undefined symbol whose address the caller knows. */
typedef struct BtjitObjectSymbol
{
	const char *name;
	void	   *addr;
} BtjitObjectSymbol;

/* The global functions a caller wants of an object: names in, addresses out. */
typedef struct BtjitObjectWanted
{
	const char *const *names;
	void	  **addrs;
	int			n;
} BtjitObjectWanted;

/* Undefined symbols whose addresses the caller knows. */
typedef struct BtjitObjectKnown
{
	const BtjitObjectSymbol *symbols;
	int			n;
} BtjitObjectKnown;

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

/*
 * The same for the functions wanted, resolving an undefined symbol from
 * the known ones when it is there, and with dlsym only otherwise.  A dlsym searches the symbol tables
 * of the program and of every library it links, in order, before those of
 * libraries loaded later (such as the caller's own module), and each table
 * is pages a forked process has not touched yet: measured in a PostgreSQL
 * backend, about 40 page faults for the module's six symbols.
 */
extern bool btjit_object_link_known(const char *image, size_t len,
									const BtjitObjectWanted *wanted,
									const BtjitObjectKnown *known,
									char *why, size_t whylen);

#endif							/* BTJIT_OBJLOAD_H */
