// Checks that --expand-compound-arith writes each scalar arith op without a kernel op of its own
// as the single ops that compute it: addui_extended as addi and an unsigned compare,
// mul*_extended through an i64 product up to 32 bits and from 32-bit halves for 64-bit types,
// the scaling casts through the power of two in the scale's exponent field. Ops inside generic
// bodies are rewritten alike, and nothing compound is left. fpowi by a constant (GPT-2's tanh
// GELU cubes its input) is products by binary exponentiation (1 / them for a negative power, 1
// for 0); by any other exponent, powf of the converted exponent.
// RUN: weir-opt --split-input-file --expand-compound-arith %s | filecheck %s
// RUN: weir-opt --split-input-file --expand-compound-arith %s | filecheck %s --check-prefix=GONE
// GONE-NOT: _extended
// GONE-NOT: scaling_
// GONE-NOT: fpowi

// CHECK-LABEL: func.func @add_with_carry
// CHECK-SAME: (%[[A:[^:]*]]: i32, %[[B:[^:]*]]: i32)
// CHECK: %[[SUM:.*]] = arith.addi %[[A]], %[[B]] : i32
// CHECK: %[[CARRY:.*]] = arith.cmpi ult, %[[SUM]], %[[A]] : i32
// CHECK: return %[[SUM]], %[[CARRY]] : i32, i1
func.func @add_with_carry(%a: i32, %b: i32) -> (i32, i1) {
  %sum, %carry = arith.addui_extended %a, %b : i32, i1
  return %sum, %carry : i32, i1
}

// -----

// Up to 32 bits: the high half is bits N..2N-1 of the product of the extended operands in i64.
// CHECK-LABEL: func.func @multiply_i16
// CHECK-SAME: (%[[A:[^:]*]]: i16, %[[B:[^:]*]]: i16)
// CHECK: %[[LOW:.*]] = arith.muli %[[A]], %[[B]] : i16
// CHECK: %[[WA:.*]] = arith.extsi %[[A]] : i16 to i64
// CHECK: %[[WB:.*]] = arith.extsi %[[B]] : i16 to i64
// CHECK: %[[P:.*]] = arith.muli %[[WA]], %[[WB]] : i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[P]], %[[N]] : i64
// CHECK: %[[HIGH:.*]] = arith.trunci %[[SHIFTED]] : i64 to i16
// CHECK: %[[ULOW:.*]] = arith.muli %[[A]], %[[B]] : i16
// CHECK: arith.extui %[[A]] : i16 to i64
// CHECK: return %[[LOW]], %[[HIGH]], %[[ULOW]]
func.func @multiply_i16(%a: i16, %b: i16) -> (i16, i16, i16, i16) {
  %low, %high = arith.mulsi_extended %a, %b : i16
  %ulow, %uhigh = arith.mului_extended %a, %b : i16
  return %low, %high, %ulow, %uhigh : i16, i16, i16, i16
}

// -----

// 64 bits: four 32x32-bit products summed with their carries; signed, the high half then loses
// b where a < 0 and a where b < 0.
// CHECK-LABEL: func.func @multiply_index
// CHECK-SAME: (%[[A:[^:]*]]: index, %[[B:[^:]*]]: index)
// CHECK: %[[LOW:.*]] = arith.muli %[[A]], %[[B]] : index
// CHECK: %[[MASK:.*]] = arith.constant 4294967295 : index
// CHECK: %[[AL:.*]] = arith.andi %[[A]], %[[MASK]] : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[AH:.*]] = arith.shrui %[[A]], %[[C32]] : index
// CHECK: %[[BL:.*]] = arith.andi %[[B]], %[[MASK]] : index
// CHECK: %[[BH:.*]] = arith.shrui %[[B]], %[[C32]] : index
// CHECK: %[[LL:.*]] = arith.muli %[[AL]], %[[BL]] : index
// CHECK: %[[LH:.*]] = arith.muli %[[AL]], %[[BH]] : index
// CHECK: %[[HL:.*]] = arith.muli %[[AH]], %[[BL]] : index
// CHECK: %[[HH:.*]] = arith.muli %[[AH]], %[[BH]] : index
// CHECK: %[[LLH:.*]] = arith.shrui %[[LL]], %[[C32]] : index
// CHECK: %[[LHL:.*]] = arith.andi %[[LH]], %[[MASK]] : index
// CHECK: %[[M1:.*]] = arith.addi %[[LLH]], %[[LHL]] : index
// CHECK: %[[HLL:.*]] = arith.andi %[[HL]], %[[MASK]] : index
// CHECK: %[[MID:.*]] = arith.addi %[[M1]], %[[HLL]] : index
// CHECK: %[[LHH:.*]] = arith.shrui %[[LH]], %[[C32]] : index
// CHECK: %[[U1:.*]] = arith.addi %[[HH]], %[[LHH]] : index
// CHECK: %[[HLH:.*]] = arith.shrui %[[HL]], %[[C32]] : index
// CHECK: %[[U2:.*]] = arith.addi %[[U1]], %[[HLH]] : index
// CHECK: %[[MIDH:.*]] = arith.shrui %[[MID]], %[[C32]] : index
// CHECK: %[[UHIGH:.*]] = arith.addi %[[U2]], %[[MIDH]] : index
// CHECK: %[[C63:.*]] = arith.constant 63 : index
// CHECK: %[[ASIGN:.*]] = arith.shrsi %[[A]], %[[C63]] : index
// CHECK: %[[BSIGN:.*]] = arith.shrsi %[[B]], %[[C63]] : index
// CHECK: %[[LOSEB:.*]] = arith.andi %[[ASIGN]], %[[B]] : index
// CHECK: %[[PART:.*]] = arith.subi %[[UHIGH]], %[[LOSEB]] : index
// CHECK: %[[LOSEA:.*]] = arith.andi %[[BSIGN]], %[[A]] : index
// CHECK: %[[HIGH:.*]] = arith.subi %[[PART]], %[[LOSEA]] : index
// CHECK: return %[[LOW]], %[[HIGH]] : index, index
func.func @multiply_index(%a: index, %b: index) -> (index, index) {
  %low, %high = arith.mulsi_extended %a, %b : index
  return %low, %high : index, index
}

// -----

// The scale's exponent field e (from its f32 value) gives 2^(e-127): the field shifted into
// place, 2^-127 (0x400000) for a zero field, a NaN (0x7FC00000) for an all-ones one.
// CHECK-LABEL: func.func @scaling
// CHECK-SAME: (%[[X:[^:]*]]: f16, %[[S:[^:]*]]: bf16, %[[D:[^:]*]]: f64)
// CHECK: %[[WIDE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[S32:.*]] = arith.extf %[[S]] : bf16 to f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[S32]] : f32 to i32
// CHECK: %[[C23:.*]] = arith.constant 23 : i32
// CHECK: %[[TOP:.*]] = arith.shrui %[[BITS]], %[[C23]] : i32
// CHECK: %[[C255:.*]] = arith.constant 255 : i32
// CHECK: %[[E:.*]] = arith.andi %[[TOP]], %[[C255]] : i32
// CHECK: %[[NORMAL:.*]] = arith.shli %[[E]], %[[C23]] : i32
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[E]], %[[C0]] : i32
// CHECK: %[[TINY:.*]] = arith.constant 4194304 : i32
// CHECK: %[[ONES:.*]] = arith.cmpi eq, %[[E]], %[[C255]] : i32
// CHECK: %[[NAN:.*]] = arith.constant 2143289344 : i32
// CHECK: %[[SPECIAL:.*]] = arith.select %[[ONES]], %[[NAN]], %[[NORMAL]] : i32
// CHECK: %[[POW:.*]] = arith.select %[[ZERO]], %[[TINY]], %[[SPECIAL]] : i32
// CHECK: %[[P:.*]] = arith.bitcast %[[POW]] : i32 to f32
// CHECK: %[[EXT:.*]] = arith.mulf %[[WIDE]], %[[P]] : f32
// The truncation divides in the input's type, then rounds once to the result's.
// CHECK: %[[D32:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK: %[[P64:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[Q:.*]] = arith.divf %[[D]], %[[P64]] : f64
// CHECK: %[[TRUNC:.*]] = arith.truncf %[[Q]] : f64 to bf16
// CHECK: return %[[EXT]], %[[TRUNC]] : f32, bf16
func.func @scaling(%x: f16, %s: bf16, %d: f64) -> (f32, bf16) {
  %0 = arith.scaling_extf %x, %s : f16, bf16 to f32
  %1 = arith.scaling_truncf %d, %d : f64, f64 to bf16
  return %0, %1 : f32, bf16
}

// -----

// Inside a generic body (where convert-elementwise-to-linalg leaves the tensor form).
// CHECK-LABEL: func.func @in_a_body
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: i8, %{{.*}}: i1):
// CHECK: %[[SUM:.*]] = arith.addi %[[A]], %[[B]] : i8
// CHECK: %[[CARRY:.*]] = arith.cmpi ult, %[[SUM]], %[[A]] : i8
// CHECK: linalg.yield %[[SUM]], %[[CARRY]] : i8, i1
func.func @in_a_body(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi1> {
  %e = tensor.empty() : tensor<4xi8>
  %f = tensor.empty() : tensor<4xi1>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xi8>, tensor<4xi8>) outs(%e, %f : tensor<4xi8>, tensor<4xi1>) {
  ^bb0(%x: i8, %y: i8, %o: i8, %p: i1):
    %s, %c = arith.addui_extended %x, %y : i8, i1
    linalg.yield %s, %c : i8, i1
  } -> (tensor<4xi8>, tensor<4xi1>)
  return %r#1 : tensor<4xi1>
}

// -----

// fpowi: the integer exponent converted to the base's float type, then powf (which keeps the
// sign of a negative base raised to an odd integer).
// CHECK-LABEL: func.func @float_to_integer_power
// CHECK-SAME: (%[[X:[^:]*]]: f32, %[[N:[^:]*]]: i64)
// CHECK: %[[NF:.*]] = arith.sitofp %[[N]] : i64 to f32
// CHECK: %[[P:.*]] = math.powf %[[X]], %[[NF]] : f32
// CHECK: return %[[P]] : f32
func.func @float_to_integer_power(%x: f32, %n: i64) -> f32 {
  %p = math.fpowi %x, %n : f32, i64
  return %p : f32
}

// -----

// fpowi by constants: x * (x * x) for 3, ((x * x) * (x * x)) * x for 5, 1 / (x * x) for -2, and
// 1 for 0, as MLIR's expansion multiplies (torch's cube is the same product).
// CHECK-LABEL: func.func @float_to_constant_powers
// CHECK-SAME: (%[[X:[^:]*]]: f32)
// CHECK-NOT: math.powf
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[CUBE:.*]] = arith.mulf %[[X]], %[[SQ]] : f32
// CHECK: %[[SQ2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[FOURTH:.*]] = arith.mulf %[[SQ2]], %[[SQ2]] : f32
// CHECK: %[[FIFTH:.*]] = arith.mulf %[[X]], %[[FOURTH]] : f32
// CHECK: %[[SQ3:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ3]] : f32
// CHECK: %[[UNIT:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: return %[[CUBE]], %[[FIFTH]], %[[INV]], %[[UNIT]] : f32, f32, f32, f32
func.func @float_to_constant_powers(%x: f32) -> (f32, f32, f32, f32) {
  %c3 = arith.constant 3 : i64
  %c5 = arith.constant 5 : i32
  %cm2 = arith.constant -2 : i64
  %c0 = arith.constant 0 : i64
  %p3 = math.fpowi %x, %c3 : f32, i64
  %p5 = math.fpowi %x, %c5 : f32, i32
  %pm2 = math.fpowi %x, %cm2 : f32, i64
  %p0 = math.fpowi %x, %c0 : f32, i64
  return %p3, %p5, %pm2, %p0 : f32, f32, f32, f32
}
