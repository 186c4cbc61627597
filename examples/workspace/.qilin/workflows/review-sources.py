"""
description: Review the Python sources with one explorer per file, in parallel, then run the compile check and report what each explorer found.
args:
  focus:
    type: string
    description: What the explorers look for.
    default: unclear names and missing error handling
checks: [compile]
limits:
  max_calls: 10
  timeout_secs: 900
"""
import asyncio

files = ["src/forecast.py", "src/report.py"]
reviews = await asyncio.gather(*[
    sdk.tool.call_async("agent", {
        "agent": "explore",
        "description": f"Review {path}",
        "prompt": f"Read {path} and list, in at most five bullets, {args['focus']}. Answer with the bullets only.",
    })
    for path in files
])
for path, review in zip(files, reviews):
    sdk.report(path, review.get("answer") or review.get("error") or "(no answer)")
{"reviewed": files}
