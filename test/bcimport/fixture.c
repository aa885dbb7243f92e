/*
 * fixture.c - functions test_bcimport.c applies the import rules to
 * (bcimport.c), compiled to bitcode as the server's own sources are.  Each
 * function's name says what it touches; test_bcimport.c says which verdict
 * each must get.
 */
extern int	fx_server_function(int x);	/* "exported by the server" */
extern int	fx_unexported_function(int x);	/* not exported */
extern int	fx_server_variable;	/* "exported by the server" */

static int	fx_counter;			/* a mutable static: never duplicated */
static const int fx_table[4] = {3, 1, 4, 1};	/* constant: copied */
static __thread int fx_tls;
extern __thread int fx_server_tls;	/* "exported", but thread-local */

int			fx_plain(int a, int b);
int			fx_mutable_static(int a);
int			fx_function_local_static(int a);
int			fx_const_table(int a);
int			fx_via_static_helper(int a);
int			fx_via_clean_helper(int a);
int			fx_calls_server(int a);
int			fx_calls_unexported(int a);
int			fx_reads_server_variable(int a);
int			fx_thread_local(int a);
int			fx_set_thread_local(int a);
int			fx_server_thread_local(int a);
int			fx_calls_dirty_external(int a);
int			fx_dirty_external(int a);

int
fx_plain(int a, int b)
{
	return (a > b) - (a < b);
}

int
fx_mutable_static(int a)
{
	return a + fx_counter++;
}

int
fx_function_local_static(int a)
{
	static int	calls;

	calls++;
	return a + calls;
}

int
fx_const_table(int a)
{
	return fx_table[a & 3];
}

static __attribute__((noinline)) int
fx_static_helper(int a)
{
	fx_counter += a;
	return fx_counter;
}

static __attribute__((noinline)) int
fx_clean_helper(int a)
{
	return fx_table[a & 3] * 2;
}

int
fx_via_static_helper(int a)
{
	return fx_static_helper(a) + 1;
}

int
fx_via_clean_helper(int a)
{
	return fx_clean_helper(a) + 1;
}

int
fx_calls_server(int a)
{
	return fx_server_function(a) + 1;
}

int
fx_calls_unexported(int a)
{
	return fx_unexported_function(a) + 1;
}

int
fx_reads_server_variable(int a)
{
	return a + fx_server_variable;
}

int
fx_thread_local(int a)
{
	return a + fx_tls;
}

/* writes fx_tls, so that the compiler cannot fold it away */
int
fx_set_thread_local(int a)
{
	fx_tls = a;
	return a;
}

int
fx_server_thread_local(int a)
{
	return a + fx_server_tls;
}

/* an external function of the module that may not come along: its body
 * touches a mutable static, so it stays a declaration */
__attribute__((noinline)) int
fx_dirty_external(int a)
{
	return fx_counter + a;
}

int
fx_calls_dirty_external(int a)
{
	return fx_dirty_external(a) * 2;
}
