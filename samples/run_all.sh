#!/usr/bin/env bash
# Compiles and runs every sample with the same command lines a user would type.
# Expects weir's tools on PATH (`make demo` puts the virtual environment's bin first).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../build/samples}"
mkdir -p "$out"
cd "$out"

say() { printf '\n== %s\n' "$*"; }

say "simple_mul: the lowering walkthrough's program (IR at each phase in $out/phases)"
weir-compile --iree-hal-target-backends=vmvx --dump-compilation-phases-to=phases \
  "$here/simple_mul/simple_mul.mlir" -o simple_mul.wvm
weir-run-module --device=local-sync --module=simple_mul.wvm --function=simple_mul \
  --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8

say "simple_mul on llvm-cpu: native code for this CPU, run on every core of local-task"
weir-compile --iree-hal-target-backends=llvm-cpu "$here/simple_mul/simple_mul.mlir" \
  -o simple_mul_cpu.wvm
weir-dump-module simple_mul_cpu.wvm | grep -A1 "variant target llvm-cpu" | cut -c1-120
weir-run-module --device=local-task --module=simple_mul_cpu.wvm --function=simple_mul \
  --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8 --expected_output=4xf32=5,12,21,32

say "multiple_modules: module_a.abs and module_b.mul called from a pipeline module"
for m in module_a module_b pipeline_sync; do
  weir-compile --iree-hal-target-backends=vmvx "$here/multiple_modules/$m.mlir" \
    -o="${m%_sync}_sync.wvm"
done
weir-run-module --device=local-sync --module=module_a_sync.wvm --module=module_b_sync.wvm \
  --module=pipeline_sync.wvm --function=run --input=4096xf32=-2.0 --output_max_element_count=8
weir-run-module --device=local-sync --module=module_a_sync.wvm --module=module_b_sync.wvm \
  --module=pipeline_sync.wvm --function=run --input=4096xf32=-2.0 \
  --expected_output=4096xf32=4.0 --output_max_element_count=8

say "multiple_modules, asynchronous: coarse-fences exports and imports on local-task"
for m in module_a module_b; do
  weir-compile --iree-execution-model=async-external --iree-hal-target-backends=vmvx \
    "$here/multiple_modules/$m.mlir" -o="${m}_async.wvm"
done
weir-compile --iree-execution-model=async-external --iree-hal-target-backends=vmvx \
  "$here/multiple_modules/pipeline_async.mlir" -o=pipeline_async.wvm
weir-run-module --device=local-task --module=module_a_async.wvm --module=module_b_async.wvm \
  --module=pipeline_async.wvm --function=run --input=4096xf32=-2.0 \
  --expected_output=4096xf32=4.0 --output_max_element_count=8

say "custom_module_async: a module written in Python called with fences (seed 000's trace)"
weir-compile --iree-execution-model=async-external --iree-hal-target-backends=vmvx \
  "$here/custom_module_async/example.mlir" -o=example_async.wvm
python "$here/custom_module_async/run.py" example_async.wvm example.main
say "custom_module_async, wait-before-signal: T=1 is signalled after the call returns"
python "$here/custom_module_async/run.py" example_async.wvm example.main --signal-after-invoke

say "multi_device: one function over two devices (seed 004), transfers elided"
mdflags=(--iree-execution-model=async-external --iree-hal-target-device=device_a=local[0]
  --iree-hal-target-device=device_b=local[1] --iree-hal-local-target-device-backends=vmvx)
weir-compile "$here/multi_device/multi_device_mul.mlir" "${mdflags[@]}" -o multi.wvm
weir-run-module --module=multi.wvm --function=multi_device_mul --input=4xf32=10,11,12,13 \
  --device=local-task --device=local-task --print_statistics
say "multi_device: the same with every transfer a queue copy between the devices"
weir-compile "$here/multi_device/multi_device_mul.mlir" "${mdflags[@]}" \
  --weir-stream-elide-transfers=false -o multi_copy.wvm
weir-run-module --module=multi_copy.wvm --function=multi_device_mul \
  --input=4xf32=10,11,12,13 --device=local-task --device=local-task --print_statistics
say "multi_device: a diamond over three devices (a -> b, a -> c, b + c -> a)"
weir-compile "$here/multi_device/diamond.mlir" "${mdflags[@]}" \
  --iree-hal-target-device=device_c=local[2] -o diamond.wvm
weir-run-module --module=diamond.wvm --function=diamond --input=4xf32=1,2,3,4 \
  --device=local-task --device=local-task --device=local-task

say "async_dialect: two independent async.execute branches joined at the end (seed 003)"
weir-compile "$here/async_dialect/two_branches.mlir" -o two_branches.wvm
weir-run-module --module=two_branches.wvm --device=local-task --function=two_branches \
  --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8 --expected_output=4xf32=11,16,23,32
say "async_dialect: the branches as separate execute regions joined by a timepoint"
weir-compile "$here/async_dialect/two_branches.mlir" --compile-to=stream \
  | grep -E 'stream.cmd.execute|stream.timepoint.join' | cut -c1-100
say "async_dialect: each branch on the device its region names"
weir-compile "$here/async_dialect/two_devices.mlir" --iree-hal-target-device=device_a=local[0] \
  --iree-hal-target-device=device_b=local[1] -o two_devices.wvm
weir-run-module --module=two_devices.wvm --device=local-task --device=local-task \
  --function=two_devices --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8 --print_statistics

say "check_module: a test module written with check ops, run by weir-check-module"
weir-compile --iree-hal-target-backends=llvm-cpu "$here/check_module/tests.mlir" -o tests.wvm
weir-check-module --module=tests.wvm --device=local-task
weir-compile "$here/check_module/wrong.mlir" -o wrong.wvm
say "check_module: a wrong test fails with the values that differ (exit code 1, expected here)"
if weir-check-module --module=wrong.wvm; then exit 1; fi

say "pytorch: an MLP exported with torch-mlir, compiled by weir, compared with eager"
python "$here/pytorch/mlp.py" .
weir-compile --iree-hal-target-backends=llvm-cpu mlp.mlir -o mlp.wvm
weir-run-module --device=local-task --module=mlp.wvm --function=main --input=2x8xf32=1
