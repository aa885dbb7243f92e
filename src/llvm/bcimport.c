/*-------------------------------------------------------------------------
 *
 * bcimport.c
 *	  The rules for importing a function's body from the server's bitcode,
 *	  and the preparation of its module for linking (bcimport.h).
 *
 * The imported copy runs inside the server, beside the server's own code,
 * so it must behave as the server's function does, in every respect that
 * anyone could observe:
 *
 * - State.  A static (internal-linkage) variable that is not constant
 *   would exist twice, the server's and the copy's, and the two would drift
 *   apart (a cache filled by one and not seen by the other, a counter
 *   counted twice).  A function that reaches one, directly or through the
 *   internal functions it calls, is not importable.  Thread-local
 *   variables are refused too (the object loader does not do TLS).
 * - Identity.  Every external-linkage function or variable the copy uses
 *   stays a declaration of the server's own symbol, resolved in the running
 *   process at link time; it must be one the process defines (checked here,
 *   through the caller's resolver), or the copy is not importable.  An
 *   external function of the same module may also come along as
 *   available_externally, which lets the optimiser inline it and otherwise
 *   still calls the server's; it is offered only if it too obeys these
 *   rules, else it stays a declaration.
 * - Copies.  Internal functions and internal constant data the copy needs
 *   are copied (renamed as the linker sees fit): nothing can tell.
 * - Anything this code does not understand (aliases, ifuncs) is refused.
 *
 * A function that raises errors is fine: ereport's functions are the
 * server's, called through their declarations.
 *
 * Plain C and malloc, so that test/bcimport links it outside the server.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcimport.h"

/*
 * Bounds on what one import may bring: the body and the internal code it
 * needs, and the external functions offered for inlining.  Comparison procs
 * are small; a bigger closure means a function that does far more than
 * compare, whose inlining buys nothing.
 */
#define BTJIT_BC_MAX_INSTR		4000
#define BTJIT_BC_MAX_EXTRA_INSTR 2000

typedef struct ValueSet
{
	LLVMValueRef *v;
	int			n;
	int			cap;
} ValueSet;

static bool
set_has(const ValueSet *s, LLVMValueRef v)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

/* Add v; false only when out of memory. */
static bool
set_add(ValueSet *s, LLVMValueRef v)
{
	if (s->n == s->cap)
	{
		int			cap = s->cap ? s->cap * 2 : 32;
		LLVMValueRef *nv = realloc(s->v, cap * sizeof(LLVMValueRef));

		if (nv == NULL)
			return false;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return true;
}

static void
set_free(ValueSet *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* What walking one function's closure found. */
typedef struct Closure
{
	ValueSet	locals;			/* internal functions and constants to copy */
	ValueSet	externs;		/* external functions defined in the module */
	int			ninstr;			/* instructions of the functions walked */
	BtjitBcResolve resolve;
	BtjitWhy   *why;
} Closure;

static bool
refuse(Closure *c, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static bool
refuse(Closure *c, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(c->why->text, sizeof(c->why->text), fmt, ap);
	va_end(ap);
	return false;
}

static const char *
value_name(LLVMValueRef v)
{
	size_t		len;
	const char *name = LLVMGetValueName2(v, &len);

	return (name && len) ? name : "(unnamed)";
}

static bool
is_local(LLVMValueRef gv)
{
	LLVMLinkage l = LLVMGetLinkage(gv);

	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

static bool visit_value(Closure *c, LLVMValueRef v, ValueSet *work);

/* A global the walked code refers to: apply the rules to it. */
static bool
visit_global(Closure *c, LLVMValueRef gv, ValueSet *work)
{
	if (LLVMIsAFunction(gv))
	{
		if (LLVMGetIntrinsicID(gv) != 0)
			return true;		/* the code generator's own */
		if (is_local(gv))
		{
			if (LLVMIsDeclaration(gv))
				return refuse(c, "internal function %s has no body", value_name(gv));
			if (!set_has(&c->locals, gv) &&
				(!set_add(&c->locals, gv) || !set_add(work, gv)))
				return refuse(c, "out of memory");
			return true;
		}
		if (c->resolve(value_name(gv)) == NULL)
			return refuse(c, "function %s is not exported by the running server",
						  value_name(gv));
		if (!LLVMIsDeclaration(gv) && !set_has(&c->externs, gv) &&
			!set_add(&c->externs, gv))
			return refuse(c, "out of memory");
		return true;
	}
	if (LLVMIsAGlobalVariable(gv))
	{
		if (LLVMIsThreadLocal(gv))
			return refuse(c, "uses thread-local variable %s", value_name(gv));
		if (is_local(gv))
		{
			if (!LLVMIsGlobalConstant(gv))
				return refuse(c, "uses static variable %s, which is not constant (it would be duplicated)",
							  value_name(gv));
			if (!set_has(&c->locals, gv) &&
				(!set_add(&c->locals, gv) || !set_add(work, gv)))
				return refuse(c, "out of memory");
			return true;
		}
		if (c->resolve(value_name(gv)) == NULL)
			return refuse(c, "variable %s is not exported by the running server",
						  value_name(gv));
		return true;
	}
	return refuse(c, "refers to %s, an alias or ifunc", value_name(gv));
}

/* An operand: globals by the rules, constants by their parts. */
static bool
visit_value(Closure *c, LLVMValueRef v, ValueSet *work)
{
	if (v == NULL)
		return true;
	if (LLVMIsAGlobalValue(v))
		return visit_global(c, v, work);
	if (LLVMIsAConstant(v))
	{
		int			n = LLVMGetNumOperands(v);

		for (int i = 0; i < n; i++)
			if (!visit_value(c, LLVMGetOperand(v, i), work))
				return false;
	}
	/* instructions, arguments, blocks, metadata, inline asm: in the body */
	return true;
}

/* Walk a function's body, or a constant's initializer. */
static bool
walk_one(Closure *c, LLVMValueRef item, ValueSet *work)
{
	if (LLVMIsAGlobalVariable(item))
		return visit_value(c, LLVMGetInitializer(item), work);

	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(item); bb != NULL;
		 bb = LLVMGetNextBasicBlock(bb))
	{
		for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst != NULL;
			 inst = LLVMGetNextInstruction(inst))
		{
			int			n = LLVMGetNumOperands(inst);

			c->ninstr++;
			for (int i = 0; i < n; i++)
				if (!visit_value(c, LLVMGetOperand(inst, i), work))
					return false;
		}
	}
	if (LLVMHasPersonalityFn(item) &&
		!visit_value(c, LLVMGetPersonalityFn(item), work))
		return false;
	return true;
}

/*
 * Everything fn's body needs, by the rules above; false with c->why when
 * something forbids importing it.
 */
static bool
walk_closure(Closure *c, LLVMValueRef fn, int budget)
{
	ValueSet	work = {0};
	bool		ok = true;

	if (!set_add(&work, fn))
		return refuse(c, "out of memory");
	for (int i = 0; ok && i < work.n; i++)
	{
		ok = walk_one(c, work.v[i], &work);
		if (ok && c->ninstr > budget)
			ok = refuse(c, "more than %d instructions to import", budget);
	}
	set_free(&work);
	return ok;
}

static bool
check(LLVMModuleRef src, const char *sym, BtjitBcResolve resolve, int *ninstr,
	  Closure *c, BtjitWhy *why)
{
	LLVMValueRef fn = LLVMGetNamedFunction(src, sym);
	int			own;

	memset(c, 0, sizeof(*c));
	c->resolve = resolve;
	c->why = why;

	if (fn == NULL || LLVMIsDeclaration(fn))
		return refuse(c, "the module does not define %s", sym);
	if (is_local(fn))
		return refuse(c, "%s is not an external function", sym);
	if (LLVMGetFirstGlobalAlias(src) != NULL || LLVMGetFirstGlobalIFunc(src) != NULL)
		return refuse(c, "its module has aliases or ifuncs");
	/* the server's own copy must be there for the guard to compare with */
	if (resolve(sym) == NULL)
		return refuse(c, "%s is not exported by the running server", sym);
	if (!walk_closure(c, fn, BTJIT_BC_MAX_INSTR))
		return false;
	own = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb != NULL;
		 bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst != NULL;
			 inst = LLVMGetNextInstruction(inst))
			own++;
	*ninstr = own;
	return true;
}

bool
btjit_bc_check(LLVMModuleRef src, const char *sym, BtjitBcResolve resolve,
			   int *ninstr, BtjitWhy *why)
{
	Closure		c;
	bool		ok = check(src, sym, resolve, ninstr, &c, why);

	set_free(&c.locals);
	set_free(&c.externs);
	return ok;
}

/*
 * The external functions of src that the import may carry for inlining:
 * those the closure calls (transitively) whose own closures obey the rules,
 * within a budget.  Their internal needs join c->locals.
 */
static bool
offer_externs(Closure *c, LLVMValueRef root, ValueSet *avail)
{
	int			extra = 0;
	BtjitWhy	ewhy;

	for (int i = 0; i < c->externs.n; i++)
	{
		LLVMValueRef e = c->externs.v[i];
		Closure		ec;

		if (e == root || set_has(avail, e))
			continue;
		memset(&ec, 0, sizeof(ec));
		ec.resolve = c->resolve;
		ec.why = &ewhy;
		if (walk_closure(&ec, e, BTJIT_BC_MAX_EXTRA_INSTR - extra))
		{
			extra += ec.ninstr;
			if (!set_add(avail, e))
				return false;
			for (int j = 0; j < ec.locals.n; j++)
				if (!set_has(&c->locals, ec.locals.v[j]) &&
					!set_add(&c->locals, ec.locals.v[j]))
					return false;
			/* its own external callees are offered in turn */
			for (int j = 0; j < ec.externs.n; j++)
				if (!set_has(&c->externs, ec.externs.v[j]) &&
					!set_add(&c->externs, ec.externs.v[j]))
					return false;
		}
		/* else it stays a declaration: the server's copy is called */
		set_free(&ec.locals);
		set_free(&ec.externs);
	}
	return true;
}

bool
btjit_bc_prepare(LLVMModuleRef src, const char *sym, const char *newname,
				 BtjitBcResolve resolve, int *ninstr, BtjitWhy *why)
{
	Closure		c;
	ValueSet	avail = {0};
	LLVMValueRef root;
	LLVMValueRef next;

	if (!check(src, sym, resolve, ninstr, &c, why))
	{
		set_free(&c.locals);
		set_free(&c.externs);
		return false;
	}
	root = LLVMGetNamedFunction(src, sym);
	if (!offer_externs(&c, root, &avail))
	{
		set_free(&c.locals);
		set_free(&c.externs);
		set_free(&avail);
		snprintf(why->text, sizeof(why->text), "out of memory");
		return false;
	}

	/*
	 * Rewrite.  The linker takes external definitions, and internal or
	 * available_externally ones only when something it took refers to
	 * them; so only the renamed body is an external definition, and all it
	 * reaches was checked above.
	 */
	for (LLVMValueRef f = LLVMGetFirstFunction(src); f != NULL; f = next)
	{
		next = LLVMGetNextFunction(f);
		if (f == root || LLVMIsDeclaration(f) || is_local(f))
			continue;
		if (set_has(&avail, f))
			LLVMSetLinkage(f, LLVMAvailableExternallyLinkage);
		else
			btjit_bc_delete_body(f);
	}
	for (LLVMValueRef g = LLVMGetFirstGlobal(src); g != NULL; g = next)
	{
		next = LLVMGetNextGlobal(g);
		if (LLVMGetLinkage(g) == LLVMAppendingLinkage)
			LLVMDeleteGlobal(g);	/* llvm.used and the like */
		else if (!is_local(g) && !LLVMIsDeclaration(g))
		{
			LLVMSetInitializer(g, NULL);
			LLVMSetLinkage(g, LLVMExternalLinkage);
		}
	}
	LLVMSetValueName2(root, newname, strlen(newname));
	LLVMSetLinkage(root, LLVMExternalLinkage);
	LLVMSetVisibility(root, LLVMDefaultVisibility);

	set_free(&c.locals);
	set_free(&c.externs);
	set_free(&avail);
	return true;
}
