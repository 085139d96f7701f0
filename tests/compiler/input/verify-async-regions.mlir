// Checks that async programs whose regions depend on each other only explicitly (tokens, value
// operands, awaits) pass unchanged, and that every implicit dependency (an async value leaving its
// function or crossing scf, two regions sharing a global without an order, a bad affinity) is a
// located error. The last chunks check the async ops' own verifier and parser errors.
// RUN: not weir-opt --split-input-file --verify-async-regions %s 2>/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file --verify-async-regions %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Regions nested in regions, and an await inside a region, are legal.
// CHECK-LABEL: func.func @nested
// CHECK: async.execute
// CHECK: async.execute
// CHECK: async.await %[[INNER:.+]] : !async.value<tensor<4xf32>>
// CHECK: async.await
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t, %r = async.execute -> !async.value<tensor<4xf32>> {
    %ti, %ri = async.execute -> !async.value<tensor<4xf32>> {
      %x = arith.addf %a, %a : tensor<4xf32>
      async.yield %x : tensor<4xf32>
    }
    %y = async.await %ri : !async.value<tensor<4xf32>>
    async.yield %y : tensor<4xf32>
  }
  %z = async.await %r : !async.value<tensor<4xf32>>
  return %z : tensor<4xf32>
}

// -----

// A chain of regions through a token and a value operand, on a named device, is legal.
// CHECK-LABEL: func.func @chain
// CHECK: async.execute -> (!async.value<tensor<4xf32>>) attributes {stream.affinity = #hal.device.promise<@device_a>}
// CHECK: async.execute [%{{.+}}] (%{{.+}} as %{{.+}}: !async.value<tensor<4xf32>>)
func.func @chain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t0, %r0 = async.execute -> !async.value<tensor<4xf32>> attributes {stream.affinity = #hal.device.promise<@device_a>} {
    %x = arith.addf %a, %a : tensor<4xf32>
    async.yield %x : tensor<4xf32>
  }
  %t1 = async.execute {
    async.yield
  }
  %t2, %r2 = async.execute [%t1] (%r0 as %u: !async.value<tensor<4xf32>>) -> !async.value<tensor<4xf32>> {
    %y = arith.mulf %u, %u : tensor<4xf32>
    async.yield %y : tensor<4xf32>
  }
  %z = async.await %r2 : !async.value<tensor<4xf32>>
  return %z : tensor<4xf32>
}

// -----

// A global stored and loaded inside one region only is legal (the region runs in order), and
// so is loading a global no one stores. Globals print as IREE spells them.
// CHECK: util.global private mutable @counter : tensor<4xf32>
// CHECK: util.global private @table = dense<1.000000e+00> : tensor<4xf32>
// CHECK-LABEL: func.func @one_region
// CHECK: util.global.store %{{.+}}, @counter : tensor<4xf32>
// CHECK: util.global.load @counter : tensor<4xf32>
util.global private mutable @counter : tensor<4xf32>
util.global private @table = dense<1.0> : tensor<4xf32>
func.func @one_region(%a: tensor<4xf32>) {
  %t = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  %y = util.global.load @table : tensor<4xf32>
  %t1 = async.execute {
    %z = util.global.load @table : tensor<4xf32>
    async.yield
  }
  async.await %t : !async.token
  return
}

// -----

// A store on the host before the region is created is legal, even from inside an scf.if.
// CHECK-LABEL: func.func @store_before_region
util.global private mutable @counter : tensor<4xf32>
func.func @store_before_region(%a: tensor<4xf32>, %c: i1) {
  util.global.store %a, @counter : tensor<4xf32>
  scf.if %c {
    util.global.store %a, @counter : tensor<4xf32>
  }
  %t = async.execute {
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  return
}

// -----

// A load on the host after awaiting the storing region's token is legal.
// CHECK-LABEL: func.func @load_after_await
util.global private mutable @counter : tensor<4xf32>
func.func @load_after_await(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  async.await %t : !async.token
  %x = util.global.load @counter : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// A region that depends on the storing region's token (directly, or through a region that does)
// may load; so may the host once it awaited the last region of the chain.
// CHECK-LABEL: func.func @load_in_dependent_region
util.global private mutable @counter : tensor<4xf32>
func.func @load_in_dependent_region(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {
    async.yield
  }
  %t2 = async.execute [%t1] {
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  async.await %t2 : !async.token
  %y = util.global.load @counter : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A region created after the host awaited the storing region may load without a token.
// CHECK-LABEL: func.func @region_after_await
util.global private mutable @counter : tensor<4xf32>
func.func @region_after_await(%a: tensor<4xf32>) {
  %t0, %r0 = async.execute -> !async.value<tensor<4xf32>> {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield %a : tensor<4xf32>
  }
  %v = async.await %r0 : !async.value<tensor<4xf32>>
  %t1 = async.execute {
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  return
}

// -----

// A region may load after awaiting, inside it, the token of the storing region; the host may
// load after awaiting the value of a region that depends on the storing one.
// CHECK-LABEL: func.func @await_in_region
util.global private mutable @counter : tensor<4xf32>
func.func @await_in_region(%a: tensor<4xf32>) {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  %t1 = async.execute {
    async.await %t0 : !async.token
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  %t2, %r2 = async.execute [%t1] -> !async.value<tensor<4xf32>> {
    async.yield %a : tensor<4xf32>
  }
  %v = async.await %r2 : !async.value<tensor<4xf32>>
  %y = util.global.load @counter : tensor<4xf32>
  return
}

// -----

// Accesses in different branches of one scf.if never both run, so need no order.
// CHECK-LABEL: func.func @branches
util.global private mutable @counter : tensor<4xf32>
func.func @branches(%a: tensor<4xf32>, %c: i1) {
  scf.if %c {
    %t = async.execute {
      util.global.store %a, @counter : tensor<4xf32>
      async.yield
    }
  } else {
    %x = util.global.load @counter : tensor<4xf32>
  }
  return
}

// -----

// A region in a loop that is awaited before the iteration ends does not race with itself.
// CHECK-LABEL: func.func @loop_awaited
util.global private mutable @counter : tensor<4xf32>
func.func @loop_awaited(%a: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = async.execute {
      util.global.store %a, @counter : tensor<4xf32>
      async.yield
    }
    async.await %t : !async.token
  }
  return
}

// -----

// An async value may not be a function's result (a declaration: in a function with a body,
// the func.return of the value is reported first, as the next case shows).
// ERR: verify-async-regions.mlir:[[# @LINE + 1]]:1: error: @module.make returns an !async.value<tensor<4xf32>> (result 0): async tokens and values cannot leave the function that made them; await it before returning
func.func private @module.make() -> !async.value<tensor<4xf32>>

// -----

// An async value may not be returned.
func.func @return_value(%a: tensor<4xf32>) -> !async.value<tensor<4xf32>> {
  %t, %r = async.execute -> !async.value<tensor<4xf32>> {
    async.yield %a : tensor<4xf32>
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: '%r' is an !async.value<tensor<4xf32>> used by 'func.return' without an async.await; await it first (%v = async.await %r : !async.value<tensor<4xf32>>)
  return %r : !async.value<tensor<4xf32>>
}

// -----

// A token may not be a function's argument.
// ERR: verify-async-regions.mlir:[[# @LINE + 1]]:1: error: @argument takes an !async.token (argument 0): async tokens and values cannot cross a function boundary; await it in the caller and pass the awaited value
func.func @argument(%t: !async.token) {
  return
}

// -----

// A token may not be passed to a call (reported at the call, which comes before the callee).
func.func @call_with_token() {
  %t = async.execute {
    async.yield
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: '%t' is an !async.token used by 'func.call' without an async.await; await it first (async.await %t : !async.token)
  func.call @module.sink(%t) : (!async.token) -> ()
  return
}
func.func private @module.sink(!async.token)

// -----

// A token may not leave an scf.if through scf.yield.
func.func @yield_token(%c: i1) {
  %t = scf.if %c -> (!async.token) {
    %t0 = async.execute {
      async.yield
    }
    // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:5: error: '%t0' is an !async.token used by 'scf.yield' without an async.await; await it first (async.await %t0 : !async.token)
    scf.yield %t0 : !async.token
  } else {
    %t1 = async.execute {
      async.yield
    }
    scf.yield %t1 : !async.token
  }
  async.await %t : !async.token
  return
}

// -----

// A token may not be carried around a loop as an iter_arg.
func.func @iter_arg_token(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t0 = async.execute {
    async.yield
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: '%t0' is an !async.token used by 'scf.for' without an async.await; await it first (async.await %t0 : !async.token)
  %t = scf.for %i = %c0 to %n step %c1 iter_args(%d = %t0) -> (!async.token) {
    scf.yield %d : !async.token
  }
  return
}

// -----

// Two regions with no dependency between them may not store and load one global.
util.global private mutable @counter : tensor<4xf32>
func.func @unordered_regions(%a: tensor<4xf32>) {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  %t1 = async.execute {
    // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:5: error: 'util.global.load' of @counter may run before or during the 'util.global.store' at [[# @LINE - 4]]:5 in an async.execute region: make the dependency explicit (a token dependency, a value operand or an async.await)
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  return
}

// -----

// The host may not load a global a region stores without awaiting the region.
util.global private mutable @counter : tensor<4xf32>
func.func @load_without_await(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: 'util.global.load' of @counter may run before or during the 'util.global.store' at [[# @LINE - 3]]:5 in an async.execute region
  %x = util.global.load @counter : tensor<4xf32>
  async.await %t0 : !async.token
  return %x : tensor<4xf32>
}

// -----

// The host may not store a global after creating a region that loads it.
util.global private mutable @counter : tensor<4xf32>
func.func @store_after_region(%a: tensor<4xf32>) {
  %t0 = async.execute {
    %x = util.global.load @counter : tensor<4xf32>
    async.yield
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: 'util.global.store' of @counter may run before or during the 'util.global.load' at [[# @LINE - 3]]:5 in an async.execute region
  util.global.store %a, @counter : tensor<4xf32>
  return
}

// -----

// A region awaited inside another region is not awaited by awaiting the outer one's token: the
// inner region that the outer one does not await may still be storing.
util.global private mutable @counter : tensor<4xf32>
func.func @inner_region_not_awaited(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t0 = async.execute {
    %ti = async.execute {
      util.global.store %a, @counter : tensor<4xf32>
      async.yield
    }
    async.yield
  }
  async.await %t0 : !async.token
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: 'util.global.load' of @counter may run before or during the 'util.global.store' at [[# @LINE - 6]]:7 in an async.execute region
  %x = util.global.load @counter : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// A storing region in a loop that nobody awaits races with itself in the next iteration.
util.global private mutable @counter : tensor<4xf32>
func.func @loop_not_awaited(%a: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = async.execute {
      // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:7: error: 'util.global.store' of @counter in an async.execute region may still be running when the next iteration of the loop at [[# @LINE - 2]]:3 runs it again: await the region (or one that depends on it) before the iteration ends
      util.global.store %a, @counter : tensor<4xf32>
      async.yield
    }
  }
  return
}

// -----

// An await that may not run (inside an scf.if) does not order the host after the region.
util.global private mutable @counter : tensor<4xf32>
func.func @await_in_if(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  scf.if %c {
    async.await %t0 : !async.token
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: 'util.global.load' of @counter may run before or during the 'util.global.store' at [[# @LINE - 6]]:5 in an async.execute region
  %x = util.global.load @counter : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// A region awaited only after its own load has no order with the region storing.
util.global private mutable @counter : tensor<4xf32>
func.func @load_before_await_in_region(%a: tensor<4xf32>) {
  %t0 = async.execute {
    util.global.store %a, @counter : tensor<4xf32>
    async.yield
  }
  %t1 = async.execute {
    // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:5: error: 'util.global.load' of @counter may run before or during the 'util.global.store' at [[# @LINE - 4]]:5 in an async.execute region
    %x = util.global.load @counter : tensor<4xf32>
    async.await %t0 : !async.token
    async.yield
  }
  return
}

// -----

// A host store in a loop, before a loading region nobody awaits, races with the previous
// iteration's region.
util.global private mutable @counter : tensor<4xf32>
func.func @loop_host_store(%a: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    util.global.store %a, @counter : tensor<4xf32>
    %t = async.execute {
      // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:7: error: 'util.global.load' of @counter in an async.execute region may still be running when the next iteration of the loop at [[# @LINE - 3]]:3 reaches the 'util.global.store' at [[# @LINE - 2]]:5
      %x = util.global.load @counter : tensor<4xf32>
      async.yield
    }
  }
  return
}

// -----

// A region's affinity must name its device as #hal.device.promise<@name>.
func.func @bad_affinity(%a: tensor<4xf32>) {
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:3: error: 'async.execute' stream.affinity must name a device as #hal.device.promise<@device>, got "device_a"
  %t = async.execute attributes {stream.affinity = "device_a"} {
    async.yield
  }
  return
}

// -----

// async.yield must yield what its async.execute returns (the op's verifier, at the yield).
func.func @mismatched_yield(%a: tensor<4xf32>) {
  %t, %r = async.execute -> !async.value<tensor<4xf32>> {
    %c = arith.constant 1 : i32
    // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:5: error: 'async.yield' op async.yield yields (i32) but its async.execute returns (!async.value<tensor<4xf32>>)
    async.yield %c : i32
  }
  return
}

// -----

// An async value used as the value it will hold is a type error that says to await it.
func.func @use_without_await(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t, %r = async.execute -> !async.value<tensor<4xf32>> {
    async.yield %a : tensor<4xf32>
  }
  // ERR: verify-async-regions.mlir:[[# @LINE + 1]]:19: error: '%r' has type !async.value<tensor<4xf32>>, but is used here as tensor<4xf32> (await it first: async.await %r : !async.value<tensor<4xf32>>)
  %y = arith.addf %r, %a : tensor<4xf32>
  return %y : tensor<4xf32>
}
