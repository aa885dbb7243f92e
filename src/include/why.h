/*-------------------------------------------------------------------------
 *
 * why.h
 *	  Why something failed, as text: the one reason buffer a function that
 *	  can fail is handed by its caller, who owns it.
 *
 * Plain C with no PostgreSQL dependency, so that the bitcode import rules
 * (llvm/bcimport.c, which test/bcimport/ builds outside a server) take the
 * same buffer as the rest; compiler.h includes it and adds the setters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_WHY_H
#define BTREE_JIT_WHY_H

/*
 * Long enough for a message that names a file path (MAXPGPATH, 1024, and
 * the words around it: compiler.h checks) untruncated.  A reason kept with
 * a state is shorter (BTJIT_REASON_LEN, BTJIT_WHY_LEN): it is cut there,
 * where it is kept.
 */
#define BTJIT_WHY_TEXT_LEN (1024 + 256)

typedef struct BtjitWhy
{
	char		text[BTJIT_WHY_TEXT_LEN];
} BtjitWhy;

#endif							/* BTREE_JIT_WHY_H */
