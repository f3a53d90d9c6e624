#!/usr/bin/env bash
# One focused device run (not committed): build, GPU tests, timing quality, deck checks.
set -uo pipefail
deps=$(realpath .deps); logs=$OUT/logs; mkdir -p $logs; build=build-device
export PATH=/usr/local/cuda/bin:$PATH KBENCH_CACHE_DIR=$PWD/.kbcache
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH=$deps/usr -DCMAKE_INCLUDE_PATH=$deps/usr/include > $logs/configure.log 2>&1 || { tail -30 $logs/configure.log; exit 1; }
ninja -C $build kbench kbench_gpu_tests kbench_corpus_cuda kbench_plain_event_loop > $logs/build.log 2>&1 || { grep -B2 -A10 "error" $logs/build.log | head -60; exit 1; }
t built
if ldd $build/kbench | grep -q "not found"; then export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:$deps/lib/x86_64-linux-gnu"; fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd $build && ctest -L gpu --output-on-failure -R "CudaDevice|KdaGpuReference|softmax_cuda_fast|softmax_exploit_cuda|kahan_softmax_cuda|copy_cuda" > $logs/gpu-tests.log 2>&1)
t gpu tests; grep -E "tests passed|\*\*\*Failed|Skipped" $logs/gpu-tests.log | head -30
grep -E "Which is|Failure" -A0 $logs/gpu-tests.log | head -20
K=$build/kbench
for i in 1 2; do $K eval softmax problems/softmax/solutions/cuda-fast --target cuda --no-baseline --json > $logs/rep$i.json 2>/dev/null; done
python3 - $logs <<'PY'
import json,sys
r=[json.load(open(f"{sys.argv[1]}/rep{i}.json")) for i in (1,2)]
print("repeatability softmax cuda-fast:", r[0]["verdict"], r[1]["verdict"])
for a,b in zip(r[0]["shapes"],r[1]["shapes"]):
  ta,tb=a["timing"],b["timing"]
  print(f"  {a['label']:<24} {ta['median']*1e6:8.3f} {tb['median']*1e6:8.3f} us diff {100*abs(ta['median']-tb['median'])/min(ta['median'],tb['median']):5.2f}%  iqr {100*ta['iqr']/ta['median']:5.1f}%  event {ta.get('event',{}).get('median',0)*1e6:8.3f} us  span {ta.get('span_samples')}/{ta['n']}  monitor {a.get('gpu_work',{}).get('monitor')}")
PY
t repeat
$K eval copy problems/copy/solutions/cuda-copy --target cuda --json > $logs/copy.json 2>/dev/null
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for shape in 0 1; do
  KBENCH_NO_KERNEL_MONITOR=1 timeout 60 "$ncu" --target-processes all --clock-control none --cache-control all -k regex:kb_calibration_copy --metrics gpu__time_duration.sum --csv -c 20 \
    $K bench copy problems/copy/solutions/cuda-copy --target cuda --shape $shape --min-samples 10 --max-samples 15 --no-blocking-kernel --no-baseline > $logs/ncu-$shape.csv 2> $logs/ncu-$shape.err
done
python3 - $logs <<'PY'
import csv,json,statistics,sys
logs=sys.argv[1]; c=json.load(open(f"{logs}/copy.json"))
for s in c["shapes"]:
  rows=[r for r in csv.reader(open(f"{logs}/ncu-{s['index']}.csv")) if len(r)>10]
  if not rows: print("no ncu rows", s['index']); continue
  h=rows[0]; vals=[float(r[h.index("Metric Value")].replace(",","")) for r in rows[1:] if r[h.index("Metric Name")]=="gpu__time_duration.sum"]
  unit=[r[h.index("Metric Unit")] for r in rows[1:] if r[h.index("Metric Name")]=="gpu__time_duration.sum"][0]
  ncu=statistics.median(vals)*{"nsecond":1e-9,"usecond":1e-6,"msecond":1e-3,"ns":1e-9,"us":1e-6,"ms":1e-3}[unit]
  kb=s["timing"]["median"]; ev=s["timing"].get("event",{}).get("median",float('nan'))
  print(f"  copy {s['label']:<12} kbench {kb*1e6:9.3f} us  ncu {ncu*1e6:9.3f} us  ratio {kb/ncu:6.3f}  (events {ev*1e6:9.3f} us, {ev/ncu:6.3f}; span {s['timing'].get('span_samples')}/{s['timing']['n']})")
PY
t ncu
chk() { local p=$1 d=$2; shift 2; $K check $p problems/$p/solutions/$d --target cuda "$@" > $logs/chk-$p-$d.log 2>&1; echo "  $p $d: $(grep -E 'verdict' $logs/chk-$p-$d.log | head -1) $(grep -E '^\s+(shape|  )' $logs/chk-$p-$d.log | grep -iE 'fail|mismatch' | head -2)"; }
chk fp8_gemm exploit-cuda-bf16-upcast --shape 2
chk fp8_gemm cuda-wgmma --shape 2
chk topk cuda-radix-select
chk topk exploit-cuda-index-by-value
chk w4a16_gemm cuda-mma-dequant
t deck-1
chk kda cuda-recurrent --shape 0
chk kda exploit-cuda-zero-output --shape 0
for d in problems/paged_attention/solutions/cuda-* problems/moe_swiglu/solutions/cuda-*; do [ -d "$d" ] && chk $(basename $(dirname $(dirname $d))) $(basename $d); done
t deck-2
for f in $logs/chk-*.log; do echo "== $f"; tail -4 $f; done > $logs/chk-tails.txt
