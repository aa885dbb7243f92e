/*
 * test/objload/fixture.c - compiled by clang-14 into relocatable objects in
 * several code models; test_objload.c links them with src/compile/objload.c and
 * calls them.  It exercises what LLVM's output for a key shape contains
 * (calls to and loads from the host process, a jump table, constants in
 * read-only data) plus writable data and zero-initialised data.
 */
extern int	host_scale;			/* defined by the test program */
extern int	host_add(int a, int b);
#ifdef NEED_MISSING
extern int	host_missing(int a);
#endif

static int	calls;				/* .bss */
static int	bias = 7;			/* .data */
static const char *const words[] = {"zero", "one", "two", "three"};

int
fx_add_scaled(int a, int b)
{
	calls++;
	return host_add(a, b) * host_scale;
}

int
fx_calls(void)
{
	return calls + bias - 7;
}

/* a switch dense enough for a jump table */
int
fx_switch(int k)
{
	switch (k)
	{
		case 0: return 11;
		case 1: return 23;
		case 2: return 35;
		case 3: return 47;
		case 4: return 59;
		case 5: return 61;
		case 6: return 73;
		case 7: return 89;
		default: return -1;
	}
}

double
fx_scale(double x)
{
	return x * 3.25 + 0.125;
}

const char *
fx_word(int i)
{
#ifdef NEED_MISSING
	return words[host_missing(i) & 3];
#else
	return words[i & 3];
#endif
}
