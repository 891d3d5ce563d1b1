module @jit_control_flow attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x8xf32> loc(unknown), %arg1: tensor<i32> loc(unknown)) -> (tensor<?x8xf32> {jax.result_info = "result[0]"}, tensor<?x8xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<?xf32> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>
    %1 = stablehlo.compare GE, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%1, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b, 8). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %2:4 = call @_wrapped_jax_export_main(%0, %arg0, %arg1) : (tensor<i32>, tensor<?x8xf32>, tensor<i32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<f32>, tensor<?xf32>)
    return %2#0, %2#1, %2#2, %2#3 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<f32>, tensor<?xf32>
  }
  func.func @reduce_window_float32_reducer(%arg0: tensor<f32> loc("reduce_window_sum:"(#loc4)), %arg1: tensor<f32> loc("reduce_window_sum:"(#loc4))) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x8xf32> loc("x"), %arg2: tensor<i32> loc("n")) -> (tensor<?x8xf32> {jax.result_info = "result[0]"}, tensor<?x8xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<?xf32> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c_1 = stablehlo.constant dense<3> : tensor<i32>
    %c_2 = stablehlo.constant dense<8> : tensor<1xi32>
    %c_3 = stablehlo.constant dense<8> : tensor<i32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %c_5 = stablehlo.constant dense<1> : tensor<i32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %arg2, %iterArg_7 = %c_6, %iterArg_8 = %arg1) : tensor<i32>, tensor<i32>, tensor<?x8xf32>
    cond {
      %18 = stablehlo.convert %iterArg_7 : tensor<i32>
      %19 = stablehlo.compare LT, %18, %iterArg, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %19 : tensor<i1>
    } do {
      %18 = stablehlo.add %iterArg_7, %c_5 : tensor<i32>
      %19 = stablehlo.sine %iterArg_8 : tensor<?x8xf32>
      %20 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
      %21 = stablehlo.concatenate %20, %c_2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %22 = stablehlo.dynamic_broadcast_in_dim %cst_4, %21, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>
      %23 = stablehlo.multiply %19, %22 : tensor<?x8xf32>
      stablehlo.return %iterArg, %18, %23 : tensor<i32>, tensor<i32>, tensor<?x8xf32>
    }
    %1 = stablehlo.compare GT, %arg2, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %18 = stablehlo.concatenate %0#2, %0#2, dim = 0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %19 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
      %20 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
      %21 = stablehlo.concatenate %20, %c_2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %22 = "stablehlo.dynamic_gather"(%18, %19, %21) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [0]>, indices_are_sorted = true}> : (tensor<?x8xf32>, tensor<1xi32>, tensor<2xi32>) -> tensor<?x8xf32>
      stablehlo.return %22 : tensor<?x8xf32>
    }, {
      %18 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
      %19 = stablehlo.concatenate %18, %c_2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %20 = stablehlo.dynamic_broadcast_in_dim %cst_4, %19, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>
      %21 = stablehlo.multiply %0#2, %20 : tensor<?x8xf32>
      stablehlo.return %21 : tensor<?x8xf32>
    }) : (tensor<i32>) -> tensor<?x8xf32>
    %4 = "stablehlo.sort"(%3) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg3: tensor<f32> loc("sort:"(#loc21)), %arg4: tensor<f32> loc("sort:"(#loc21))):
      %18 = stablehlo.compare EQ, %arg3, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %19 = stablehlo.select %18, %cst_0, %arg3 : tensor<i1>, tensor<f32>
      %20 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %21 = stablehlo.select %20, %cst, %19 : tensor<i1>, tensor<f32>
      %22 = stablehlo.compare EQ, %arg4, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %23 = stablehlo.select %22, %cst_0, %arg4 : tensor<i1>, tensor<f32>
      %24 = stablehlo.compare NE, %arg4, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %25 = stablehlo.select %24, %cst, %23 : tensor<i1>, tensor<f32>
      %26 = stablehlo.compare LT, %21, %25, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %26 : tensor<i1>
    }) : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %5 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %6:2 = call @divmod(%arg0, %arg0, %c) : (tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
    %7 = stablehlo.add %6#0, %c_5 : tensor<i32>
    %8 = stablehlo.reshape %7 : (tensor<i32>) -> tensor<1xi32>
    %9 = stablehlo.concatenate %8, %c_2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %10 = "stablehlo.dynamic_gather"(%3, %5, %9) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [0]>, indices_are_sorted = true}> : (tensor<?x8xf32>, tensor<1xi32>, tensor<2xi32>) -> tensor<?x8xf32>
    %11 = call @cumsum(%arg0, %4) : (tensor<i32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %12 = call @_pad(%arg0, %3, %c_6) : (tensor<i32>, tensor<?x8xf32>, tensor<i32>) -> tensor<?x8xf32>
    %13 = stablehlo.reduce(%10 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<f32>
    %14 = stablehlo.convert %arg0 : tensor<i32>
    %15 = stablehlo.multiply %14, %c_3 : tensor<i32>
    %16 = stablehlo.reshape %15 : (tensor<i32>) -> tensor<1xi32>
    %17 = stablehlo.dynamic_reshape %3, %16 : (tensor<?x8xf32>, tensor<1xi32>) -> tensor<?xf32>
    return %11, %12, %13, %17 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<f32>, tensor<?xf32>
  }
  func.func private @divmod(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> loc(unknown), %arg2: tensor<i32> loc(unknown)) -> (tensor<i32>, tensor<i32>) {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = call @floor_divide(%arg0, %0, %arg2) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = call @remainder(%arg0, %0, %arg2) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    return %1, %2 : tensor<i32>, tensor<i32>
  }
  func.func private @floor_divide(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> loc(unknown), %arg2: tensor<i32> loc(unknown)) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.divide %arg1, %arg2 : tensor<i32>
    %1 = stablehlo.sign %arg1 : tensor<i32>
    %2 = stablehlo.sign %arg2 : tensor<i32>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = stablehlo.remainder %arg1, %arg2 : tensor<i32>
    %5 = stablehlo.compare NE, %4, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.and %3, %5 : tensor<i1>
    %7 = stablehlo.subtract %0, %c : tensor<i32>
    %8 = call @_where(%arg0, %6, %7, %0) : (tensor<i32>, tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    return %8 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i1> loc(unknown), %arg2: tensor<i32> loc(unknown), %arg3: tensor<i32> loc(unknown)) -> tensor<i32> {
    %0 = stablehlo.select %arg1, %arg2, %arg3 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @remainder(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> loc(unknown), %arg2: tensor<i32> loc(unknown)) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare EQ, %arg2, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = call @_where(%arg0, %0, %c, %arg2) : (tensor<i32>, tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = stablehlo.remainder %arg1, %1 : tensor<i32>
    %3 = stablehlo.compare NE, %2, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = stablehlo.compare LT, %2, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %5 = stablehlo.compare LT, %1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %7 = stablehlo.and %6, %3 : tensor<i1>
    %8 = stablehlo.add %2, %1 : tensor<i32>
    %9 = stablehlo.select %7, %8, %2 : tensor<i1>, tensor<i32>
    return %9 : tensor<i32>
  }
  func.func private @cumsum(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x8xf32> loc(unknown)) -> tensor<?x8xf32> {
    %0 = call @cumsum_0(%arg0, %arg1) : (tensor<i32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    return %0 : tensor<?x8xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<i32> loc(unknown), %arg1: tensor<?x8xf32> loc(unknown)) -> tensor<?x8xf32> {
    %c = stablehlo.constant dense<1> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<1xi32>
    %c_1 = stablehlo.constant dense<-1> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = stablehlo.convert %arg0 : tensor<i32>
    %2 = stablehlo.add %1, %c_1 : tensor<i32>
    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>
    %4 = stablehlo.concatenate %3, %c_0, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %5 = stablehlo.reshape %4 : (tensor<2xi32>) -> tensor<1x2xi32>
    %6 = stablehlo.concatenate %c_0, %c_0, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %7 = stablehlo.reshape %6 : (tensor<2xi32>) -> tensor<1x2xi32>
    %8 = stablehlo.concatenate %5, %7, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
    %9 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %10 = stablehlo.concatenate %9, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %11 = stablehlo.concatenate %c, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %12 = stablehlo.concatenate %c, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %13 = stablehlo.concatenate %c, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %14 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg1, %0, %10, %11, %12, %13, %8) {api_version = 2 : i32, called_computations = [@reduce_window_float32_reducer]} : (tensor<?x8xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x8xf32>
    return %14 : tensor<?x8xf32>
  }
  func.func private @_pad(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x8xf32> loc(unknown), %arg2: tensor<i32> loc(unknown)) -> tensor<?x8xf32> {
    %0 = stablehlo.convert %arg2 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg1, %0, low = [1, 0], high = [2, 0], interior = [0, 0] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
    return %1 : tensor<?x8xf32>
  }
}
