#!/usr/bin/env python3
"""Checks that every episode's wake kind agrees with its waker's kernel stack, in
'blocking --stacks --format=json' output: a softirq kind has a softirq in the stack, a
timer kind its callback, an ipi kind its vector's handler (sysvec_irq_work for irq_work), a
task kind neither a softirq nor an interrupt nor a system vector; over the whole
trace and over its last second (which must have at least MIN_LAST woken episodes).
Usage: expect_wakers.py BLOCKING_JSON SPAN_NS MIN_LAST"""
import json
import re
import sys

SOFTIRQ = re.compile(r"^(__do_softirq|handle_softirqs|do_softirq|run_ksoftirqd|net_rx_action|"
                     r"run_timer_softirq|tasklet_action.*|blk_done_softirq|rcu_core.*)$")
IRQ = re.compile(r"^(asm_common_interrupt|common_interrupt|handle_irq_event.*|"
                 r"__handle_irq_event_percpu|hrtimer_interrupt|__hrtimer_run_queues|"
                 r"__run_timers|call_timer_fn)$")
# x86's system vectors (IPIs, irq_work): interrupts without an irq_handler_entry.
IPI = re.compile(r"^(asm_|__)?sysvec_(irq_work|call_function|call_function_single|"
                 r"reschedule_ipi|x86_platform_ipi)$")
IPI_HANDLER = {"irq_work": "sysvec_irq_work", "call_function": "sysvec_call_function",
               "call_function_single": "sysvec_call_function_single",
               "reschedule": "sysvec_reschedule_ipi", "x86_platform_ipi": "sysvec_x86_platform_ipi"}


def agrees(kind, detail, frames):
    if kind == "softirq":
        return any(SOFTIRQ.match(f) for f in frames)
    if kind == "timer":
        return detail in frames
    if kind == "task":
        return not any(SOFTIRQ.match(f) or IRQ.match(f) or IPI.match(f) for f in frames)
    if kind == "ipi":
        return IPI_HANDLER.get(detail, "?") in frames
    if kind == "hardirq":
        return any(IRQ.match(f) for f in frames)
    return True


def main():
    doc = json.load(open(sys.argv[1]))
    span, min_last = int(sys.argv[2]), int(sys.argv[3])
    stacks = doc.get("stacks") or {}

    def waker_frames(b):
        if "waker_stack_id" in b:  # the stacks table of blocking-json.md
            frames = stacks.get(str(b["waker_stack_id"])) or []
        else:
            frames = b.get("waker_stack") or []
        return [f["symbol"] or "" for f in frames if f.get("kernel")]

    seen = {"all": 0, "last": 0}
    bad = {"all": 0, "last": 0}
    kinds = {}
    shown = 0
    for task in doc["tasks"]:
        for b in task["blocks"]:
            w = b.get("wakeup") or {}
            kind = w.get("kind")
            frames = waker_frames(b)
            if b.get("unfinished") or not frames:
                continue
            woken = b["start_ns"] + b["duration_ns"] - (b.get("runq_ns") or 0)
            parts = ["all"] + (["last"] if woken >= span - 1e9 else [])
            kinds[kind] = kinds.get(kind, 0) + 1
            ok = agrees(kind, w.get("detail"), frames)
            for p in parts:
                seen[p] += 1
                bad[p] += not ok
            if not ok and shown < 5:
                shown += 1
                print("# at %.3f s, %s %s woke %s from: %s" % (
                    woken / 1e9, kind, w.get("detail"), task["comm"], ";".join(frames[:20])),
                    file=sys.stderr)
    failed = bad["all"] or seen["last"] < min_last
    # On failure on stderr too: prove shows it, so a CI log says which part failed.
    print("# %d episodes with a waker stack (%s), %d disagree; last second: %d (at least %d "
          "wanted), %d disagree" % (seen["all"], kinds, bad["all"], seen["last"], min_last,
                                     bad["last"]), file=sys.stderr if failed else sys.stdout)
    sys.exit(1 if failed else 0)


main()
