/*-------------------------------------------------------------------------
 *
 * messages.c
 *	  How the locator says why it refuses: the first, most specific reason,
 *	  and addresses named relative to the binary.
 *
 * The bottom of src/binpatch/: every file of the analysis (elf_image.c,
 * callconv.c, refsweep.c, clobbers.c) and the locator above it
 * (src/locate/) report through these.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"

/* The name of a fault injection, for messages */
static const char *
fault_name(BtjitLocateFault fault)
{
	switch (fault)
	{
		case BTJIT_LOCATE_NORMAL:
			return "none";
		case BTJIT_LOCATE_FAULT_WRONG_CALLER:
			return "WRONG_CALLER";
		case BTJIT_LOCATE_FAULT_TRUNCATED:
			return "TRUNCATED";
		case BTJIT_LOCATE_FAULT_NO_CALLCONV:
			return "NO_CALLCONV";
	}
	return "?";
}

/*
 * Record why the locator refuses (the first, most specific reason wins) and
 * return false, so that callers can write "return loc_fail(...)".
 */
bool
loc_fail(LocCtx *cx, const char *fmt,...)
{
	va_list		ap;
	size_t		n = 0;

	/* keep the first, most specific reason */
	if (cx->failed || cx->why == NULL || cx->whylen == 0)
	{
		cx->failed = true;
		return false;
	}
	cx->failed = true;
	if (cx->fault != BTJIT_LOCATE_NORMAL)
	{
		int			k = snprintf(cx->why, cx->whylen, "[fault injection %s] ",
								 fault_name(cx->fault));

		n = (k < 0) ? 0 : ((size_t) k >= cx->whylen ? cx->whylen - 1 : (size_t) k);
	}
	va_start(ap, fmt);
	vsnprintf(cx->why + n, cx->whylen - n, fmt, ap);
	va_end(ap);
	return false;
}

/* Append to an evidence text in a fixed buffer, never overflowing it */
void
loc_append(char *buf, size_t len, const char *fmt,...)
{
	size_t		used = strlen(buf);
	va_list		ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* "postgres+0x1b7cd0": a vaddr named relative to the binary */
const char *
addr_name(const LocCtx *cx, uint64_t vaddr, char *buf, size_t len)
{
	snprintf(buf, len, "%s+%#llx", cx->img.name, (unsigned long long) vaddr);
	return buf;
}
