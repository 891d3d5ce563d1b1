module @jit_transformer_train_step attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32> loc(unknown), %arg1: tensor<64x128xf32> loc(unknown), %arg2: tensor<128x64xf32> loc(unknown), %arg3: tensor<64x64xf32> loc(unknown), %arg4: tensor<64x192xf32> loc(unknown), %arg5: tensor<64xf32> loc(unknown), %arg6: tensor<64x128xf32> loc(unknown), %arg7: tensor<128x64xf32> loc(unknown), %arg8: tensor<64x64xf32> loc(unknown), %arg9: tensor<64x192xf32> loc(unknown), %arg10: tensor<256x64xf32> loc(unknown), %arg11: tensor<?x?xi32> loc(unknown), %arg12: tensor<?x?xi32> loc(unknown)) -> (tensor<64xf32> {jax.result_info = "result[0]['blocks'][0]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][0]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][0]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][0]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][0]['wqkv']"}, tensor<64xf32> {jax.result_info = "result[0]['blocks'][1]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][1]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][1]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][1]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][1]['wqkv']"}, tensor<256x64xf32> {jax.result_info = "result[0]['wte']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<2048> : tensor<i32>
    %c_1 = stablehlo.constant dense<-1> : tensor<i32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.get_dimension_size %arg11, dim = 0 : (tensor<?x?xi32>) -> tensor<i32>
    %1 = stablehlo.get_dimension_size %arg11, dim = 1 : (tensor<?x?xi32>) -> tensor<i32>
    %2 = stablehlo.get_dimension_size %arg12, dim = 0 : (tensor<?x?xi32>) -> tensor<i32>
    %3 = stablehlo.get_dimension_size %arg12, dim = 1 : (tensor<?x?xi32>) -> tensor<i32>
    %4 = stablehlo.compare GE, %0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%4, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[1].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %5 = stablehlo.compare GE, %1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%5, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 's'. Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[1].shape[0] (= {0}), 's' = {1} from specification 's' for dimension args[1].shape[1] (= {1}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
    %6 = stablehlo.compare EQ, %2, %0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%6, %2, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[2].shape[0] (= {0}) and the specification 'b' (= {1}). Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {1} from specification 'b' for dimension args[1].shape[0] (= {1}), 's' = {2} from specification 's' for dimension args[1].shape[1] (= {2}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %7 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%7, %3, %1, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[2].shape[1] (= {0}) and the specification 's' (= {1}). Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {2} from specification 'b' for dimension args[1].shape[0] (= {2}), 's' = {1} from specification 's' for dimension args[1].shape[1] (= {1}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %8 = stablehlo.convert %1 : tensor<i32>
    %9 = stablehlo.multiply %8, %c_1 : tensor<i32>
    %10 = stablehlo.add %9, %c_0 : tensor<i32>
    %11 = stablehlo.compare GE, %10, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %12 = stablehlo.convert %1 : tensor<i32>
    %13 = stablehlo.multiply %12, %c_1 : tensor<i32>
    %14 = stablehlo.add %13, %c_0 : tensor<i32>
    stablehlo.custom_call @shape_assertion(%11, %14, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the symbolic shape constraint s <= 2048. Expected '- s + 2048' to be greater or equal to 0, but found {0}.  Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {1} from specification 'b' for dimension args[1].shape[0] (= {1}), 's' = {2} from specification 's' for dimension args[1].shape[1] (= {2}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %15:12 = call @_wrapped_jax_export_main(%0, %1, %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12) : (tensor<i32>, tensor<i32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<?x?xi32>, tensor<?x?xi32>) -> (tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>)
    return %15#0, %15#1, %15#2, %15#3, %15#4, %15#5, %15#6, %15#7, %15#8, %15#9, %15#10, %15#11 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> {jax.global_constant = "s"} loc(unknown), %arg2: tensor<64xf32> loc("p['blocks'][0]['g']"), %arg3: tensor<64x128xf32> loc("p['blocks'][0]['w1']"), %arg4: tensor<128x64xf32> loc("p['blocks'][0]['w2']"), %arg5: tensor<64x64xf32> loc("p['blocks'][0]['wo']"), %arg6: tensor<64x192xf32> loc("p['blocks'][0]['wqkv']"), %arg7: tensor<64xf32> loc("p['blocks'][1]['g']"), %arg8: tensor<64x128xf32> loc("p['blocks'][1]['w1']"), %arg9: tensor<128x64xf32> loc("p['blocks'][1]['w2']"), %arg10: tensor<64x64xf32> loc("p['blocks'][1]['wo']"), %arg11: tensor<64x192xf32> loc("p['blocks'][1]['wqkv']"), %arg12: tensor<256x64xf32> loc("p['wte']"), %arg13: tensor<?x?xi32> loc("tokens"), %arg14: tensor<?x?xi32> loc("targets")) -> (tensor<64xf32> {jax.result_info = "result[0]['blocks'][0]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][0]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][0]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][0]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][0]['wqkv']"}, tensor<64xf32> {jax.result_info = "result[0]['blocks'][1]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][1]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][1]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][1]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][1]['wqkv']"}, tensor<256x64xf32> {jax.result_info = "result[0]['wte']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %c = stablehlo.constant dense<256> : tensor<1xi32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %cst_1 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %cst_2 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %cst_3 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_6 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %cst_7 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %c_8 = stablehlo.constant dense<16> : tensor<1xi32>
    %c_9 = stablehlo.constant dense<4> : tensor<1xi32>
    %c_10 = stablehlo.constant dense<192> : tensor<1xi32>
    %c_11 = stablehlo.constant dense<128> : tensor<1xi32>
    %c_12 = stablehlo.constant dense<0> : tensor<1xi32>
    %cst_13 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_14 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c_16 = stablehlo.constant dense<64> : tensor<1xi32>
    %c_17 = stablehlo.constant dense<256> : tensor<i32>
    %c_18 = stablehlo.constant dense<0> : tensor<i32>
    %cst_19 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %c_20 = stablehlo.constant dense<1> : tensor<1xi32>
    %0 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %1 = stablehlo.concatenate %0, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %2 = stablehlo.dynamic_iota %1, dim = 0 : (tensor<2xi32>) -> tensor<?x1xf32>
    %3 = stablehlo.iota dim = 1 : tensor<1x64xf32>
    %4 = stablehlo.negate %3 : tensor<1x64xf32>
    %5 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<1x64xf32>
    %6 = stablehlo.divide %4, %5 : tensor<1x64xf32>
    %7 = stablehlo.exponential %6 : tensor<1x64xf32>
    %8 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %9 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %10 = stablehlo.concatenate %8, %9, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %11 = stablehlo.dynamic_broadcast_in_dim %c_18, %10, dims = [] : (tensor<i32>, tensor<2xi32>) -> tensor<?x?xi32>
    %12 = stablehlo.compare LT, %arg13, %11, SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
    %13 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %14 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %15 = stablehlo.concatenate %13, %14, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %16 = stablehlo.dynamic_broadcast_in_dim %c_17, %15, dims = [] : (tensor<i32>, tensor<2xi32>) -> tensor<?x?xi32>
    %17 = stablehlo.add %arg13, %16 : tensor<?x?xi32>
    %18 = stablehlo.select %12, %17, %arg13 : tensor<?x?xi1>, tensor<?x?xi32>
    %19 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %20 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %21 = stablehlo.concatenate %19, %20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %22 = stablehlo.dynamic_broadcast_in_dim %18, %21, dims = [0, 1] : (tensor<?x?xi32>, tensor<3xi32>) -> tensor<?x?x1xi32>
    %23 = "stablehlo.gather"(%arg12, %22) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>}> : (tensor<256x64xf32>, tensor<?x?x1xi32>) -> tensor<?x?x64xf32>
    %24 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %25 = stablehlo.concatenate %24, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %26 = stablehlo.dynamic_broadcast_in_dim %2, %25, dims = [0, 1] : (tensor<?x1xf32>, tensor<2xi32>) -> tensor<?x64xf32>
    %27 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %28 = stablehlo.concatenate %27, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %29 = stablehlo.dynamic_broadcast_in_dim %7, %28, dims = [0, 1] : (tensor<1x64xf32>, tensor<2xi32>) -> tensor<?x64xf32>
    %30 = stablehlo.multiply %26, %29 : tensor<?x64xf32>
    %31 = stablehlo.sine %30 : tensor<?x64xf32>
    %32 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %33 = stablehlo.concatenate %c_20, %32, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %34 = stablehlo.dynamic_broadcast_in_dim %31, %33, dims = [1, 2] : (tensor<?x64xf32>, tensor<3xi32>) -> tensor<1x?x64xf32>
    %35 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %36 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %37 = stablehlo.concatenate %35, %36, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %38 = stablehlo.dynamic_broadcast_in_dim %34, %37, dims = [0, 1, 2] : (tensor<1x?x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %39 = stablehlo.add %23, %38 : tensor<?x?x64xf32>
    %40 = stablehlo.multiply %39, %39 : tensor<?x?x64xf32>
    %41 = stablehlo.reduce(%40 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %42 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %43 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %44 = stablehlo.concatenate %42, %43, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %45 = stablehlo.dynamic_broadcast_in_dim %41, %44, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %46 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %47 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %48 = stablehlo.concatenate %46, %47, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %49 = stablehlo.dynamic_broadcast_in_dim %cst_19, %48, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %50 = stablehlo.divide %45, %49 : tensor<?x?x1xf32>
    %51 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %52 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %53 = stablehlo.concatenate %51, %52, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %54 = stablehlo.dynamic_broadcast_in_dim %cst_14, %53, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %55 = stablehlo.add %50, %54 : tensor<?x?x1xf32>
    %56 = stablehlo.rsqrt %55 : tensor<?x?x1xf32>
    %57 = stablehlo.divide %56, %55 : tensor<?x?x1xf32>
    %58 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %59 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %60 = stablehlo.concatenate %58, %59, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %61 = stablehlo.dynamic_broadcast_in_dim %cst_13, %60, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %62 = stablehlo.multiply %61, %57 : tensor<?x?x1xf32>
    %63 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %64 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %65 = stablehlo.concatenate %63, %64, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %66 = stablehlo.dynamic_broadcast_in_dim %56, %65, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %67 = stablehlo.multiply %39, %66 : tensor<?x?x64xf32>
    %68 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %69 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %70 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %71 = stablehlo.concatenate %69, %70, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %72 = stablehlo.dynamic_broadcast_in_dim %68, %71, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %73 = stablehlo.multiply %67, %72 : tensor<?x?x64xf32>
    %74 = stablehlo.dot_general %73, %arg6, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    %75 = stablehlo.concatenate %c_12, %c_12, %c_12, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %76 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %77 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %78 = stablehlo.concatenate %76, %77, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %79 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %80 = stablehlo.real_dynamic_slice %74, %75, %78, %79 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %81 = stablehlo.concatenate %c_12, %c_12, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %82 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %83 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %84 = stablehlo.concatenate %82, %83, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %85 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %86 = stablehlo.real_dynamic_slice %74, %81, %84, %85 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %87 = stablehlo.concatenate %c_12, %c_12, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %88 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %89 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %90 = stablehlo.concatenate %88, %89, %c_10, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %91 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %92 = stablehlo.real_dynamic_slice %74, %87, %90, %91 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %93 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %94 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %95 = stablehlo.concatenate %93, %94, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %96 = stablehlo.dynamic_reshape %80, %95 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %97 = stablehlo.transpose %96, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %98 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %99 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %100 = stablehlo.concatenate %98, %99, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %101 = stablehlo.dynamic_reshape %86, %100 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %102 = stablehlo.transpose %101, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %103 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %104 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %105 = stablehlo.concatenate %103, %104, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %106 = stablehlo.dynamic_reshape %92, %105 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %107 = stablehlo.transpose %106, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %108 = stablehlo.transpose %102, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %109 = stablehlo.dot_general %97, %108, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %110 = stablehlo.sqrt %cst_7 : tensor<f32>
    %111 = stablehlo.convert %110 : tensor<f32>
    %112 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %113 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %114 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %115 = stablehlo.concatenate %112, %c_9, %113, %114, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %116 = stablehlo.dynamic_broadcast_in_dim %111, %115, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %117 = stablehlo.divide %109, %116 : tensor<?x4x?x?xf32>
    %118 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %119 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %120 = stablehlo.concatenate %118, %119, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %121 = stablehlo.dynamic_iota %120, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>
    %122 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %123 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %124 = stablehlo.concatenate %122, %123, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %125 = stablehlo.dynamic_iota %124, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi32>
    %126 = stablehlo.compare GT, %125, %121, SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
    %127 = stablehlo.convert %126 : (tensor<?x?xi1>) -> tensor<?x?xf32>
    %128 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %129 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %130 = stablehlo.concatenate %128, %129, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %131 = stablehlo.dynamic_broadcast_in_dim %cst_6, %130, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %132 = stablehlo.multiply %127, %131 : tensor<?x?xf32>
    %133 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %134 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %135 = stablehlo.concatenate %c_20, %c_20, %133, %134, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %136 = stablehlo.dynamic_broadcast_in_dim %132, %135, dims = [2, 3] : (tensor<?x?xf32>, tensor<4xi32>) -> tensor<1x1x?x?xf32>
    %137 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %138 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %139 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %140 = stablehlo.concatenate %137, %c_9, %138, %139, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %141 = stablehlo.dynamic_broadcast_in_dim %136, %140, dims = [0, 1, 2, 3] : (tensor<1x1x?x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %142 = stablehlo.add %117, %141 : tensor<?x4x?x?xf32>
    %143 = stablehlo.reduce(%142 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %144 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %145 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %146 = stablehlo.concatenate %144, %c_9, %145, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %147 = stablehlo.dynamic_broadcast_in_dim %cst_5, %146, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x?xf32>
    %148 = stablehlo.maximum %147, %143 : tensor<?x4x?xf32>
    %149 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %150 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %151 = stablehlo.concatenate %149, %c_9, %150, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %152 = stablehlo.dynamic_broadcast_in_dim %148, %151, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %153 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %154 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %155 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %156 = stablehlo.concatenate %153, %c_9, %154, %155, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %157 = stablehlo.dynamic_broadcast_in_dim %152, %156, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %158 = stablehlo.subtract %142, %157 : tensor<?x4x?x?xf32>
    %159 = stablehlo.exponential %158 : tensor<?x4x?x?xf32>
    %160 = stablehlo.reduce(%159 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %161 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %162 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %163 = stablehlo.concatenate %161, %c_9, %162, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %164 = stablehlo.dynamic_broadcast_in_dim %160, %163, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %165 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %166 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %167 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %168 = stablehlo.concatenate %165, %c_9, %166, %167, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %169 = stablehlo.dynamic_broadcast_in_dim %164, %168, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %170 = stablehlo.divide %159, %169 : tensor<?x4x?x?xf32>
    %171 = stablehlo.multiply %164, %164 : tensor<?x4x?x1xf32>
    %172 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %173 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %174 = stablehlo.concatenate %172, %c_9, %173, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %175 = stablehlo.dynamic_broadcast_in_dim %cst_4, %174, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %176 = stablehlo.divide %175, %171 : tensor<?x4x?x1xf32>
    %177 = stablehlo.dot_general %170, %107, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %178 = stablehlo.transpose %177, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %179 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %180 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %181 = stablehlo.concatenate %179, %180, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %182 = stablehlo.dynamic_reshape %178, %181 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %183 = stablehlo.dot_general %182, %arg5, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %184 = stablehlo.add %39, %183 : tensor<?x?x64xf32>
    %185 = stablehlo.multiply %184, %184 : tensor<?x?x64xf32>
    %186 = stablehlo.reduce(%185 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %187 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %188 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %189 = stablehlo.concatenate %187, %188, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %190 = stablehlo.dynamic_broadcast_in_dim %186, %189, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %191 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %192 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %193 = stablehlo.concatenate %191, %192, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %194 = stablehlo.dynamic_broadcast_in_dim %cst_19, %193, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %195 = stablehlo.divide %190, %194 : tensor<?x?x1xf32>
    %196 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %197 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %198 = stablehlo.concatenate %196, %197, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %199 = stablehlo.dynamic_broadcast_in_dim %cst_14, %198, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %200 = stablehlo.add %195, %199 : tensor<?x?x1xf32>
    %201 = stablehlo.rsqrt %200 : tensor<?x?x1xf32>
    %202 = stablehlo.divide %201, %200 : tensor<?x?x1xf32>
    %203 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %204 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %205 = stablehlo.concatenate %203, %204, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %206 = stablehlo.dynamic_broadcast_in_dim %cst_13, %205, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %207 = stablehlo.multiply %206, %202 : tensor<?x?x1xf32>
    %208 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %209 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %210 = stablehlo.concatenate %208, %209, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %211 = stablehlo.dynamic_broadcast_in_dim %201, %210, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %212 = stablehlo.multiply %184, %211 : tensor<?x?x64xf32>
    %213 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %214 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %215 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %216 = stablehlo.concatenate %214, %215, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %217 = stablehlo.dynamic_broadcast_in_dim %213, %216, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %218 = stablehlo.multiply %212, %217 : tensor<?x?x64xf32>
    %219 = stablehlo.dot_general %218, %arg3, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %220 = stablehlo.multiply %219, %219 : tensor<?x?x128xf32>
    %221 = stablehlo.multiply %220, %219 : tensor<?x?x128xf32>
    %222 = stablehlo.multiply %219, %219 : tensor<?x?x128xf32>
    %223 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %224 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %225 = stablehlo.concatenate %223, %224, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %226 = stablehlo.dynamic_broadcast_in_dim %cst_3, %225, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %227 = stablehlo.multiply %226, %222 : tensor<?x?x128xf32>
    %228 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %229 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %230 = stablehlo.concatenate %228, %229, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %231 = stablehlo.dynamic_broadcast_in_dim %cst_2, %230, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %232 = stablehlo.multiply %231, %221 : tensor<?x?x128xf32>
    %233 = stablehlo.add %219, %232 : tensor<?x?x128xf32>
    %234 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %235 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %236 = stablehlo.concatenate %234, %235, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %237 = stablehlo.dynamic_broadcast_in_dim %cst_1, %236, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %238 = stablehlo.multiply %237, %233 : tensor<?x?x128xf32>
    %239 = stablehlo.tanh %238 : tensor<?x?x128xf32>
    %240 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %241 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %242 = stablehlo.concatenate %240, %241, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %243 = stablehlo.dynamic_broadcast_in_dim %cst_4, %242, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %244 = stablehlo.subtract %243, %239 : tensor<?x?x128xf32>
    %245 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %246 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %247 = stablehlo.concatenate %245, %246, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %248 = stablehlo.dynamic_broadcast_in_dim %cst_4, %247, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %249 = stablehlo.add %248, %239 : tensor<?x?x128xf32>
    %250 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %251 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %252 = stablehlo.concatenate %250, %251, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %253 = stablehlo.dynamic_broadcast_in_dim %cst_0, %252, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %254 = stablehlo.multiply %253, %249 : tensor<?x?x128xf32>
    %255 = stablehlo.multiply %219, %254 : tensor<?x?x128xf32>
    %256 = stablehlo.dot_general %255, %arg4, contracting_dims = [2] x [0] : (tensor<?x?x128xf32>, tensor<128x64xf32>) -> tensor<?x?x64xf32>
    %257 = stablehlo.add %184, %256 : tensor<?x?x64xf32>
    %258 = stablehlo.multiply %257, %257 : tensor<?x?x64xf32>
    %259 = stablehlo.reduce(%258 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %260 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %261 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %262 = stablehlo.concatenate %260, %261, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %263 = stablehlo.dynamic_broadcast_in_dim %259, %262, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %264 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %265 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %266 = stablehlo.concatenate %264, %265, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %267 = stablehlo.dynamic_broadcast_in_dim %cst_19, %266, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %268 = stablehlo.divide %263, %267 : tensor<?x?x1xf32>
    %269 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %270 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %271 = stablehlo.concatenate %269, %270, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %272 = stablehlo.dynamic_broadcast_in_dim %cst_14, %271, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %273 = stablehlo.add %268, %272 : tensor<?x?x1xf32>
    %274 = stablehlo.rsqrt %273 : tensor<?x?x1xf32>
    %275 = stablehlo.divide %274, %273 : tensor<?x?x1xf32>
    %276 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %277 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %278 = stablehlo.concatenate %276, %277, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %279 = stablehlo.dynamic_broadcast_in_dim %cst_13, %278, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %280 = stablehlo.multiply %279, %275 : tensor<?x?x1xf32>
    %281 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %282 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %283 = stablehlo.concatenate %281, %282, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %284 = stablehlo.dynamic_broadcast_in_dim %274, %283, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %285 = stablehlo.multiply %257, %284 : tensor<?x?x64xf32>
    %286 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %287 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %288 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %289 = stablehlo.concatenate %287, %288, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %290 = stablehlo.dynamic_broadcast_in_dim %286, %289, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %291 = stablehlo.multiply %285, %290 : tensor<?x?x64xf32>
    %292 = stablehlo.dot_general %291, %arg11, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    %293 = stablehlo.concatenate %c_12, %c_12, %c_12, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %294 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %295 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %296 = stablehlo.concatenate %294, %295, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %297 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %298 = stablehlo.real_dynamic_slice %292, %293, %296, %297 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %299 = stablehlo.concatenate %c_12, %c_12, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %300 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %301 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %302 = stablehlo.concatenate %300, %301, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %303 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %304 = stablehlo.real_dynamic_slice %292, %299, %302, %303 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %305 = stablehlo.concatenate %c_12, %c_12, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %306 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %307 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %308 = stablehlo.concatenate %306, %307, %c_10, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %309 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %310 = stablehlo.real_dynamic_slice %292, %305, %308, %309 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %311 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %312 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %313 = stablehlo.concatenate %311, %312, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %314 = stablehlo.dynamic_reshape %298, %313 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %315 = stablehlo.transpose %314, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %316 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %317 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %318 = stablehlo.concatenate %316, %317, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %319 = stablehlo.dynamic_reshape %304, %318 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %320 = stablehlo.transpose %319, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %321 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %322 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %323 = stablehlo.concatenate %321, %322, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %324 = stablehlo.dynamic_reshape %310, %323 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %325 = stablehlo.transpose %324, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %326 = stablehlo.transpose %320, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %327 = stablehlo.dot_general %315, %326, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %328 = stablehlo.sqrt %cst_7 : tensor<f32>
    %329 = stablehlo.convert %328 : tensor<f32>
    %330 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %331 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %332 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %333 = stablehlo.concatenate %330, %c_9, %331, %332, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %334 = stablehlo.dynamic_broadcast_in_dim %329, %333, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %335 = stablehlo.divide %327, %334 : tensor<?x4x?x?xf32>
    %336 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %337 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %338 = stablehlo.concatenate %336, %337, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %339 = stablehlo.dynamic_iota %338, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>
    %340 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %341 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %342 = stablehlo.concatenate %340, %341, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %343 = stablehlo.dynamic_iota %342, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi32>
    %344 = stablehlo.compare GT, %343, %339, SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
    %345 = stablehlo.convert %344 : (tensor<?x?xi1>) -> tensor<?x?xf32>
    %346 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %347 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %348 = stablehlo.concatenate %346, %347, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %349 = stablehlo.dynamic_broadcast_in_dim %cst_6, %348, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %350 = stablehlo.multiply %345, %349 : tensor<?x?xf32>
    %351 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %352 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %353 = stablehlo.concatenate %c_20, %c_20, %351, %352, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %354 = stablehlo.dynamic_broadcast_in_dim %350, %353, dims = [2, 3] : (tensor<?x?xf32>, tensor<4xi32>) -> tensor<1x1x?x?xf32>
    %355 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %356 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %357 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %358 = stablehlo.concatenate %355, %c_9, %356, %357, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %359 = stablehlo.dynamic_broadcast_in_dim %354, %358, dims = [0, 1, 2, 3] : (tensor<1x1x?x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %360 = stablehlo.add %335, %359 : tensor<?x4x?x?xf32>
    %361 = stablehlo.reduce(%360 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %362 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %363 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %364 = stablehlo.concatenate %362, %c_9, %363, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %365 = stablehlo.dynamic_broadcast_in_dim %cst_5, %364, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x?xf32>
    %366 = stablehlo.maximum %365, %361 : tensor<?x4x?xf32>
    %367 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %368 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %369 = stablehlo.concatenate %367, %c_9, %368, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %370 = stablehlo.dynamic_broadcast_in_dim %366, %369, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %371 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %372 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %373 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %374 = stablehlo.concatenate %371, %c_9, %372, %373, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %375 = stablehlo.dynamic_broadcast_in_dim %370, %374, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %376 = stablehlo.subtract %360, %375 : tensor<?x4x?x?xf32>
    %377 = stablehlo.exponential %376 : tensor<?x4x?x?xf32>
    %378 = stablehlo.reduce(%377 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %379 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %380 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %381 = stablehlo.concatenate %379, %c_9, %380, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %382 = stablehlo.dynamic_broadcast_in_dim %378, %381, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %383 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %384 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %385 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %386 = stablehlo.concatenate %383, %c_9, %384, %385, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %387 = stablehlo.dynamic_broadcast_in_dim %382, %386, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %388 = stablehlo.divide %377, %387 : tensor<?x4x?x?xf32>
    %389 = stablehlo.multiply %382, %382 : tensor<?x4x?x1xf32>
    %390 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %391 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %392 = stablehlo.concatenate %390, %c_9, %391, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %393 = stablehlo.dynamic_broadcast_in_dim %cst_4, %392, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %394 = stablehlo.divide %393, %389 : tensor<?x4x?x1xf32>
    %395 = stablehlo.dot_general %388, %325, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %396 = stablehlo.transpose %395, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %397 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %398 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %399 = stablehlo.concatenate %397, %398, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %400 = stablehlo.dynamic_reshape %396, %399 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %401 = stablehlo.dot_general %400, %arg10, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %402 = stablehlo.add %257, %401 : tensor<?x?x64xf32>
    %403 = stablehlo.multiply %402, %402 : tensor<?x?x64xf32>
    %404 = stablehlo.reduce(%403 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %405 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %406 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %407 = stablehlo.concatenate %405, %406, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %408 = stablehlo.dynamic_broadcast_in_dim %404, %407, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %409 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %410 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %411 = stablehlo.concatenate %409, %410, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %412 = stablehlo.dynamic_broadcast_in_dim %cst_19, %411, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %413 = stablehlo.divide %408, %412 : tensor<?x?x1xf32>
    %414 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %415 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %416 = stablehlo.concatenate %414, %415, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %417 = stablehlo.dynamic_broadcast_in_dim %cst_14, %416, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %418 = stablehlo.add %413, %417 : tensor<?x?x1xf32>
    %419 = stablehlo.rsqrt %418 : tensor<?x?x1xf32>
    %420 = stablehlo.divide %419, %418 : tensor<?x?x1xf32>
    %421 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %422 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %423 = stablehlo.concatenate %421, %422, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %424 = stablehlo.dynamic_broadcast_in_dim %cst_13, %423, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %425 = stablehlo.multiply %424, %420 : tensor<?x?x1xf32>
    %426 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %427 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %428 = stablehlo.concatenate %426, %427, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %429 = stablehlo.dynamic_broadcast_in_dim %419, %428, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %430 = stablehlo.multiply %402, %429 : tensor<?x?x64xf32>
    %431 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %432 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %433 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %434 = stablehlo.concatenate %432, %433, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %435 = stablehlo.dynamic_broadcast_in_dim %431, %434, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %436 = stablehlo.multiply %430, %435 : tensor<?x?x64xf32>
    %437 = stablehlo.dot_general %436, %arg8, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %438 = stablehlo.multiply %437, %437 : tensor<?x?x128xf32>
    %439 = stablehlo.multiply %438, %437 : tensor<?x?x128xf32>
    %440 = stablehlo.multiply %437, %437 : tensor<?x?x128xf32>
    %441 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %442 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %443 = stablehlo.concatenate %441, %442, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %444 = stablehlo.dynamic_broadcast_in_dim %cst_3, %443, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %445 = stablehlo.multiply %444, %440 : tensor<?x?x128xf32>
    %446 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %447 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %448 = stablehlo.concatenate %446, %447, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %449 = stablehlo.dynamic_broadcast_in_dim %cst_2, %448, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %450 = stablehlo.multiply %449, %439 : tensor<?x?x128xf32>
    %451 = stablehlo.add %437, %450 : tensor<?x?x128xf32>
    %452 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %453 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %454 = stablehlo.concatenate %452, %453, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %455 = stablehlo.dynamic_broadcast_in_dim %cst_1, %454, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %456 = stablehlo.multiply %455, %451 : tensor<?x?x128xf32>
    %457 = stablehlo.tanh %456 : tensor<?x?x128xf32>
    %458 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %459 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %460 = stablehlo.concatenate %458, %459, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %461 = stablehlo.dynamic_broadcast_in_dim %cst_4, %460, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %462 = stablehlo.subtract %461, %457 : tensor<?x?x128xf32>
    %463 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %464 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %465 = stablehlo.concatenate %463, %464, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %466 = stablehlo.dynamic_broadcast_in_dim %cst_4, %465, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %467 = stablehlo.add %466, %457 : tensor<?x?x128xf32>
    %468 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %469 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %470 = stablehlo.concatenate %468, %469, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %471 = stablehlo.dynamic_broadcast_in_dim %cst_0, %470, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %472 = stablehlo.multiply %471, %467 : tensor<?x?x128xf32>
    %473 = stablehlo.multiply %437, %472 : tensor<?x?x128xf32>
    %474 = stablehlo.dot_general %473, %arg9, contracting_dims = [2] x [0] : (tensor<?x?x128xf32>, tensor<128x64xf32>) -> tensor<?x?x64xf32>
    %475 = stablehlo.add %402, %474 : tensor<?x?x64xf32>
    %476 = stablehlo.transpose %arg12, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %477 = stablehlo.dot_general %475, %476, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
    %478 = stablehlo.reduce(%477 init: %cst_5) applies stablehlo.maximum across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %479 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %480 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %481 = stablehlo.concatenate %479, %480, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %482 = stablehlo.dynamic_broadcast_in_dim %cst_5, %481, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %483 = stablehlo.maximum %482, %478 : tensor<?x?xf32>
    %484 = stablehlo.is_finite %483 : (tensor<?x?xf32>) -> tensor<?x?xi1>
    %485 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %486 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %487 = stablehlo.concatenate %485, %486, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %488 = stablehlo.dynamic_broadcast_in_dim %cst_15, %487, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %489 = stablehlo.select %484, %483, %488 : tensor<?x?xi1>, tensor<?x?xf32>
    %490 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %491 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %492 = stablehlo.concatenate %490, %491, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %493 = stablehlo.dynamic_broadcast_in_dim %489, %492, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %494 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %495 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %496 = stablehlo.concatenate %494, %495, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %497 = stablehlo.dynamic_broadcast_in_dim %493, %496, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %498 = stablehlo.subtract %477, %497 : tensor<?x?x256xf32>
    %499 = stablehlo.exponential %498 : tensor<?x?x256xf32>
    %500 = stablehlo.reduce(%499 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %501 = stablehlo.abs %500 : tensor<?x?xf32>
    %502 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %503 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %504 = stablehlo.concatenate %502, %503, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %505 = stablehlo.dynamic_broadcast_in_dim %cst_15, %504, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %506 = stablehlo.compare GE, %500, %505, FLOAT : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xi1>
    %507 = stablehlo.log %501 : tensor<?x?xf32>
    %508 = stablehlo.add %507, %489 : tensor<?x?xf32>
    %509 = call @_one_hot(%arg0, %arg1, %arg14) : (tensor<i32>, tensor<i32>, tensor<?x?xi32>) -> tensor<?x?x256xf32>
    %510 = stablehlo.multiply %477, %509 : tensor<?x?x256xf32>
    %511 = stablehlo.reduce(%510 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %512 = stablehlo.subtract %508, %511 : tensor<?x?xf32>
    %513 = stablehlo.multiply %arg1, %arg0 : tensor<i32>
    %514 = stablehlo.convert %513 : (tensor<i32>) -> tensor<f32>
    %515 = stablehlo.reduce(%512 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<f32>
    %516 = stablehlo.divide %515, %514 : tensor<f32>
    %517 = stablehlo.divide %cst_4, %514 : tensor<f32>
    %518 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %519 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %520 = stablehlo.concatenate %518, %519, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %521 = stablehlo.dynamic_broadcast_in_dim %517, %520, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %522 = stablehlo.negate %521 : tensor<?x?xf32>
    %523 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %524 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %525 = stablehlo.concatenate %523, %524, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %526 = stablehlo.dynamic_broadcast_in_dim %522, %525, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %527 = stablehlo.multiply %526, %509 : tensor<?x?x256xf32>
    %528 = stablehlo.divide %521, %501 : tensor<?x?xf32>
    %529 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %530 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %531 = stablehlo.concatenate %529, %530, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %532 = stablehlo.dynamic_broadcast_in_dim %cst_15, %531, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %533 = stablehlo.select %506, %532, %528 : tensor<?x?xi1>, tensor<?x?xf32>
    %534 = stablehlo.select %506, %528, %532 : tensor<?x?xi1>, tensor<?x?xf32>
    %535 = stablehlo.negate %533 : tensor<?x?xf32>
    %536 = stablehlo.add %534, %535 : tensor<?x?xf32>
    %537 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %538 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %539 = stablehlo.concatenate %537, %538, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %540 = stablehlo.dynamic_broadcast_in_dim %536, %539, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %541 = stablehlo.multiply %540, %499 : tensor<?x?x256xf32>
    %542 = stablehlo.add %527, %541 : tensor<?x?x256xf32>
    %543 = stablehlo.dot_general %542, %475, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x256xf32>, tensor<?x?x64xf32>) -> tensor<256x64xf32>
    %544 = stablehlo.transpose %543, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %545 = stablehlo.dot_general %542, %476, contracting_dims = [2] x [1] : (tensor<?x?x256xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
    %546 = stablehlo.transpose %544, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %547 = stablehlo.dot_general %545, %473, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x128xf32>) -> tensor<64x128xf32>
    %548 = stablehlo.transpose %547, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %549 = stablehlo.dot_general %545, %arg9, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %550 = stablehlo.multiply %437, %549 : tensor<?x?x128xf32>
    %551 = stablehlo.multiply %549, %472 : tensor<?x?x128xf32>
    %552 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %553 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %554 = stablehlo.concatenate %552, %553, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %555 = stablehlo.dynamic_broadcast_in_dim %cst_0, %554, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %556 = stablehlo.multiply %555, %550 : tensor<?x?x128xf32>
    %557 = stablehlo.multiply %556, %462 : tensor<?x?x128xf32>
    %558 = stablehlo.multiply %557, %457 : tensor<?x?x128xf32>
    %559 = stablehlo.add %557, %558 : tensor<?x?x128xf32>
    %560 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %561 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %562 = stablehlo.concatenate %560, %561, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %563 = stablehlo.dynamic_broadcast_in_dim %cst_1, %562, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %564 = stablehlo.multiply %563, %559 : tensor<?x?x128xf32>
    %565 = stablehlo.add %551, %564 : tensor<?x?x128xf32>
    %566 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %567 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %568 = stablehlo.concatenate %566, %567, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %569 = stablehlo.dynamic_broadcast_in_dim %cst_2, %568, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %570 = stablehlo.multiply %569, %564 : tensor<?x?x128xf32>
    %571 = stablehlo.multiply %570, %445 : tensor<?x?x128xf32>
    %572 = stablehlo.add %565, %571 : tensor<?x?x128xf32>
    %573 = stablehlo.dot_general %572, %436, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x128xf32>, tensor<?x?x64xf32>) -> tensor<128x64xf32>
    %574 = stablehlo.transpose %573, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %575 = stablehlo.dot_general %572, %arg8, contracting_dims = [2] x [1] : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %576 = stablehlo.multiply %430, %575 : tensor<?x?x64xf32>
    %577 = stablehlo.reduce(%576 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %578 = stablehlo.reshape %577 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %579 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %580 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %581 = stablehlo.concatenate %579, %580, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %582 = stablehlo.dynamic_broadcast_in_dim %431, %581, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %583 = stablehlo.multiply %575, %582 : tensor<?x?x64xf32>
    %584 = stablehlo.reduce(%578 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %585 = stablehlo.multiply %402, %583 : tensor<?x?x64xf32>
    %586 = stablehlo.reduce(%585 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %587 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %588 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %589 = stablehlo.concatenate %587, %588, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %590 = stablehlo.dynamic_reshape %586, %589 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %591 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %592 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %593 = stablehlo.concatenate %591, %592, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %594 = stablehlo.dynamic_broadcast_in_dim %419, %593, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %595 = stablehlo.multiply %583, %594 : tensor<?x?x64xf32>
    %596 = stablehlo.add %545, %595 : tensor<?x?x64xf32>
    %597 = stablehlo.multiply %590, %425 : tensor<?x?x1xf32>
    %598 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %599 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %600 = stablehlo.concatenate %598, %599, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %601 = stablehlo.dynamic_broadcast_in_dim %cst_19, %600, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %602 = stablehlo.divide %597, %601 : tensor<?x?x1xf32>
    %603 = stablehlo.reduce(%602 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %604 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %605 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %606 = stablehlo.concatenate %604, %605, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %607 = stablehlo.dynamic_broadcast_in_dim %603, %606, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %608 = stablehlo.multiply %402, %607 : tensor<?x?x64xf32>
    %609 = stablehlo.add %596, %608 : tensor<?x?x64xf32>
    %610 = stablehlo.multiply %607, %402 : tensor<?x?x64xf32>
    %611 = stablehlo.add %609, %610 : tensor<?x?x64xf32>
    %612 = stablehlo.dot_general %611, %400, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<64x64xf32>
    %613 = stablehlo.transpose %612, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %614 = stablehlo.dot_general %611, %arg10, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %615 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %616 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %617 = stablehlo.concatenate %615, %616, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %618 = stablehlo.dynamic_reshape %614, %617 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %619 = stablehlo.transpose %618, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %620 = stablehlo.dot_general %619, %388, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x16x?xf32>
    %621 = stablehlo.transpose %620, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %622 = stablehlo.dot_general %619, %325, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
    %623 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %624 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %625 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %626 = stablehlo.concatenate %623, %c_9, %624, %625, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %627 = stablehlo.dynamic_broadcast_in_dim %394, %626, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %628 = stablehlo.multiply %622, %627 : tensor<?x4x?x?xf32>
    %629 = stablehlo.multiply %628, %377 : tensor<?x4x?x?xf32>
    %630 = stablehlo.reduce(%629 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %631 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %632 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %633 = stablehlo.concatenate %631, %c_9, %632, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %634 = stablehlo.dynamic_reshape %630, %633 : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %635 = stablehlo.negate %634 : tensor<?x4x?x1xf32>
    %636 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %637 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %638 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %639 = stablehlo.concatenate %636, %c_9, %637, %638, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %640 = stablehlo.dynamic_broadcast_in_dim %382, %639, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %641 = stablehlo.divide %622, %640 : tensor<?x4x?x?xf32>
    %642 = stablehlo.reduce(%635 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x1xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %643 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %644 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %645 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %646 = stablehlo.concatenate %643, %c_9, %644, %645, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %647 = stablehlo.dynamic_broadcast_in_dim %642, %646, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %648 = stablehlo.add %641, %647 : tensor<?x4x?x?xf32>
    %649 = stablehlo.multiply %648, %377 : tensor<?x4x?x?xf32>
    %650 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %651 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %652 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %653 = stablehlo.concatenate %650, %c_9, %651, %652, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %654 = stablehlo.dynamic_broadcast_in_dim %329, %653, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %655 = stablehlo.divide %649, %654 : tensor<?x4x?x?xf32>
    %656 = stablehlo.dot_general %655, %315, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %657 = stablehlo.transpose %656, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %658 = stablehlo.dot_general %655, %326, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %659 = stablehlo.transpose %657, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %660 = stablehlo.transpose %621, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %661 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %662 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %663 = stablehlo.concatenate %661, %662, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %664 = stablehlo.dynamic_reshape %660, %663 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %665 = stablehlo.transpose %659, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %666 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %667 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %668 = stablehlo.concatenate %666, %667, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %669 = stablehlo.dynamic_reshape %665, %668 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %670 = stablehlo.transpose %658, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %671 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %672 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %673 = stablehlo.concatenate %671, %672, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %674 = stablehlo.dynamic_reshape %670, %673 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %675 = stablehlo.concatenate %674, %669, %664, dim = 2 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
    %676 = stablehlo.dot_general %675, %291, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x192xf32>, tensor<?x?x64xf32>) -> tensor<192x64xf32>
    %677 = stablehlo.transpose %676, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %678 = stablehlo.dot_general %675, %arg11, contracting_dims = [2] x [1] : (tensor<?x?x192xf32>, tensor<64x192xf32>) -> tensor<?x?x64xf32>
    %679 = stablehlo.multiply %285, %678 : tensor<?x?x64xf32>
    %680 = stablehlo.reduce(%679 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %681 = stablehlo.reshape %680 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %682 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %683 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %684 = stablehlo.concatenate %682, %683, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %685 = stablehlo.dynamic_broadcast_in_dim %286, %684, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %686 = stablehlo.multiply %678, %685 : tensor<?x?x64xf32>
    %687 = stablehlo.reduce(%681 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %688 = stablehlo.add %584, %687 : tensor<64xf32>
    %689 = stablehlo.multiply %257, %686 : tensor<?x?x64xf32>
    %690 = stablehlo.reduce(%689 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %691 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %692 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %693 = stablehlo.concatenate %691, %692, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %694 = stablehlo.dynamic_reshape %690, %693 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %695 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %696 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %697 = stablehlo.concatenate %695, %696, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %698 = stablehlo.dynamic_broadcast_in_dim %274, %697, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %699 = stablehlo.multiply %686, %698 : tensor<?x?x64xf32>
    %700 = stablehlo.add %611, %699 : tensor<?x?x64xf32>
    %701 = stablehlo.multiply %694, %280 : tensor<?x?x1xf32>
    %702 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %703 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %704 = stablehlo.concatenate %702, %703, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %705 = stablehlo.dynamic_broadcast_in_dim %cst_19, %704, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %706 = stablehlo.divide %701, %705 : tensor<?x?x1xf32>
    %707 = stablehlo.reduce(%706 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %708 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %709 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %710 = stablehlo.concatenate %708, %709, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %711 = stablehlo.dynamic_broadcast_in_dim %707, %710, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %712 = stablehlo.multiply %257, %711 : tensor<?x?x64xf32>
    %713 = stablehlo.add %700, %712 : tensor<?x?x64xf32>
    %714 = stablehlo.multiply %711, %257 : tensor<?x?x64xf32>
    %715 = stablehlo.add %713, %714 : tensor<?x?x64xf32>
    %716 = stablehlo.dot_general %715, %255, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x128xf32>) -> tensor<64x128xf32>
    %717 = stablehlo.transpose %716, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %718 = stablehlo.dot_general %715, %arg4, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %719 = stablehlo.multiply %219, %718 : tensor<?x?x128xf32>
    %720 = stablehlo.multiply %718, %254 : tensor<?x?x128xf32>
    %721 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %722 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %723 = stablehlo.concatenate %721, %722, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %724 = stablehlo.dynamic_broadcast_in_dim %cst_0, %723, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %725 = stablehlo.multiply %724, %719 : tensor<?x?x128xf32>
    %726 = stablehlo.multiply %725, %244 : tensor<?x?x128xf32>
    %727 = stablehlo.multiply %726, %239 : tensor<?x?x128xf32>
    %728 = stablehlo.add %726, %727 : tensor<?x?x128xf32>
    %729 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %730 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %731 = stablehlo.concatenate %729, %730, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %732 = stablehlo.dynamic_broadcast_in_dim %cst_1, %731, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %733 = stablehlo.multiply %732, %728 : tensor<?x?x128xf32>
    %734 = stablehlo.add %720, %733 : tensor<?x?x128xf32>
    %735 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %736 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %737 = stablehlo.concatenate %735, %736, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %738 = stablehlo.dynamic_broadcast_in_dim %cst_2, %737, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %739 = stablehlo.multiply %738, %733 : tensor<?x?x128xf32>
    %740 = stablehlo.multiply %739, %227 : tensor<?x?x128xf32>
    %741 = stablehlo.add %734, %740 : tensor<?x?x128xf32>
    %742 = stablehlo.dot_general %741, %218, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x128xf32>, tensor<?x?x64xf32>) -> tensor<128x64xf32>
    %743 = stablehlo.transpose %742, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %744 = stablehlo.dot_general %741, %arg3, contracting_dims = [2] x [1] : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %745 = stablehlo.multiply %212, %744 : tensor<?x?x64xf32>
    %746 = stablehlo.reduce(%745 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %747 = stablehlo.reshape %746 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %748 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %749 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %750 = stablehlo.concatenate %748, %749, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %751 = stablehlo.dynamic_broadcast_in_dim %213, %750, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %752 = stablehlo.multiply %744, %751 : tensor<?x?x64xf32>
    %753 = stablehlo.reduce(%747 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %754 = stablehlo.multiply %184, %752 : tensor<?x?x64xf32>
    %755 = stablehlo.reduce(%754 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %756 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %757 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %758 = stablehlo.concatenate %756, %757, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %759 = stablehlo.dynamic_reshape %755, %758 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %760 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %761 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %762 = stablehlo.concatenate %760, %761, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %763 = stablehlo.dynamic_broadcast_in_dim %201, %762, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %764 = stablehlo.multiply %752, %763 : tensor<?x?x64xf32>
    %765 = stablehlo.add %715, %764 : tensor<?x?x64xf32>
    %766 = stablehlo.multiply %759, %207 : tensor<?x?x1xf32>
    %767 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %768 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %769 = stablehlo.concatenate %767, %768, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %770 = stablehlo.dynamic_broadcast_in_dim %cst_19, %769, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %771 = stablehlo.divide %766, %770 : tensor<?x?x1xf32>
    %772 = stablehlo.reduce(%771 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %773 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %774 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %775 = stablehlo.concatenate %773, %774, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %776 = stablehlo.dynamic_broadcast_in_dim %772, %775, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %777 = stablehlo.multiply %184, %776 : tensor<?x?x64xf32>
    %778 = stablehlo.add %765, %777 : tensor<?x?x64xf32>
    %779 = stablehlo.multiply %776, %184 : tensor<?x?x64xf32>
    %780 = stablehlo.add %778, %779 : tensor<?x?x64xf32>
    %781 = stablehlo.dot_general %780, %182, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<64x64xf32>
    %782 = stablehlo.transpose %781, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %783 = stablehlo.dot_general %780, %arg5, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %784 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %785 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %786 = stablehlo.concatenate %784, %785, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %787 = stablehlo.dynamic_reshape %783, %786 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %788 = stablehlo.transpose %787, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %789 = stablehlo.dot_general %788, %170, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x16x?xf32>
    %790 = stablehlo.transpose %789, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %791 = stablehlo.dot_general %788, %107, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
    %792 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %793 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %794 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %795 = stablehlo.concatenate %792, %c_9, %793, %794, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %796 = stablehlo.dynamic_broadcast_in_dim %176, %795, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %797 = stablehlo.multiply %791, %796 : tensor<?x4x?x?xf32>
    %798 = stablehlo.multiply %797, %159 : tensor<?x4x?x?xf32>
    %799 = stablehlo.reduce(%798 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %800 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %801 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %802 = stablehlo.concatenate %800, %c_9, %801, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %803 = stablehlo.dynamic_reshape %799, %802 : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %804 = stablehlo.negate %803 : tensor<?x4x?x1xf32>
    %805 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %806 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %807 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %808 = stablehlo.concatenate %805, %c_9, %806, %807, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %809 = stablehlo.dynamic_broadcast_in_dim %164, %808, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %810 = stablehlo.divide %791, %809 : tensor<?x4x?x?xf32>
    %811 = stablehlo.reduce(%804 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x1xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %812 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %813 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %814 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %815 = stablehlo.concatenate %812, %c_9, %813, %814, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %816 = stablehlo.dynamic_broadcast_in_dim %811, %815, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %817 = stablehlo.add %810, %816 : tensor<?x4x?x?xf32>
    %818 = stablehlo.multiply %817, %159 : tensor<?x4x?x?xf32>
    %819 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %820 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %821 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %822 = stablehlo.concatenate %819, %c_9, %820, %821, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %823 = stablehlo.dynamic_broadcast_in_dim %111, %822, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %824 = stablehlo.divide %818, %823 : tensor<?x4x?x?xf32>
    %825 = stablehlo.dot_general %824, %97, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %826 = stablehlo.transpose %825, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %827 = stablehlo.dot_general %824, %108, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %828 = stablehlo.transpose %826, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %829 = stablehlo.transpose %790, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %830 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %831 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %832 = stablehlo.concatenate %830, %831, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %833 = stablehlo.dynamic_reshape %829, %832 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %834 = stablehlo.transpose %828, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %835 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %836 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %837 = stablehlo.concatenate %835, %836, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %838 = stablehlo.dynamic_reshape %834, %837 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %839 = stablehlo.transpose %827, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %840 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %841 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %842 = stablehlo.concatenate %840, %841, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %843 = stablehlo.dynamic_reshape %839, %842 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %844 = stablehlo.concatenate %843, %838, %833, dim = 2 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
    %845 = stablehlo.dot_general %844, %73, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x192xf32>, tensor<?x?x64xf32>) -> tensor<192x64xf32>
    %846 = stablehlo.transpose %845, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %847 = stablehlo.dot_general %844, %arg6, contracting_dims = [2] x [1] : (tensor<?x?x192xf32>, tensor<64x192xf32>) -> tensor<?x?x64xf32>
    %848 = stablehlo.multiply %67, %847 : tensor<?x?x64xf32>
    %849 = stablehlo.reduce(%848 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %850 = stablehlo.reshape %849 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %851 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %852 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %853 = stablehlo.concatenate %851, %852, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %854 = stablehlo.dynamic_broadcast_in_dim %68, %853, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %855 = stablehlo.multiply %847, %854 : tensor<?x?x64xf32>
    %856 = stablehlo.reduce(%850 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %857 = stablehlo.add %753, %856 : tensor<64xf32>
    %858 = stablehlo.multiply %39, %855 : tensor<?x?x64xf32>
    %859 = stablehlo.reduce(%858 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %860 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %861 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %862 = stablehlo.concatenate %860, %861, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %863 = stablehlo.dynamic_reshape %859, %862 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %864 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %865 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %866 = stablehlo.concatenate %864, %865, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %867 = stablehlo.dynamic_broadcast_in_dim %56, %866, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %868 = stablehlo.multiply %855, %867 : tensor<?x?x64xf32>
    %869 = stablehlo.add %780, %868 : tensor<?x?x64xf32>
    %870 = stablehlo.multiply %863, %62 : tensor<?x?x1xf32>
    %871 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %872 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %873 = stablehlo.concatenate %871, %872, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %874 = stablehlo.dynamic_broadcast_in_dim %cst_19, %873, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %875 = stablehlo.divide %870, %874 : tensor<?x?x1xf32>
    %876 = stablehlo.reduce(%875 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %877 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %878 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %879 = stablehlo.concatenate %877, %878, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %880 = stablehlo.dynamic_broadcast_in_dim %876, %879, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %881 = stablehlo.multiply %39, %880 : tensor<?x?x64xf32>
    %882 = stablehlo.add %869, %881 : tensor<?x?x64xf32>
    %883 = stablehlo.multiply %880, %39 : tensor<?x?x64xf32>
    %884 = stablehlo.add %882, %883 : tensor<?x?x64xf32>
    %885 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %886 = "stablehlo.scatter"(%885, %22, %884) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
    ^bb0(%arg15: tensor<f32> loc("scatter-add:"(#loc78)), %arg16: tensor<f32> loc("scatter-add:"(#loc78))):
      %921 = stablehlo.add %arg15, %arg16 : tensor<f32>
      stablehlo.return %921 : tensor<f32>
    }) : (tensor<256x64xf32>, tensor<?x?x1xi32>, tensor<?x?x64xf32>) -> tensor<256x64xf32>
    %887 = stablehlo.add %546, %886 : tensor<256x64xf32>
    %888 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %889 = stablehlo.multiply %888, %857 : tensor<64xf32>
    %890 = stablehlo.subtract %arg2, %889 : tensor<64xf32>
    %891 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %892 = stablehlo.multiply %891, %743 : tensor<64x128xf32>
    %893 = stablehlo.subtract %arg3, %892 : tensor<64x128xf32>
    %894 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %895 = stablehlo.multiply %894, %717 : tensor<128x64xf32>
    %896 = stablehlo.subtract %arg4, %895 : tensor<128x64xf32>
    %897 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %898 = stablehlo.multiply %897, %782 : tensor<64x64xf32>
    %899 = stablehlo.subtract %arg5, %898 : tensor<64x64xf32>
    %900 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %901 = stablehlo.multiply %900, %846 : tensor<64x192xf32>
    %902 = stablehlo.subtract %arg6, %901 : tensor<64x192xf32>
    %903 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %904 = stablehlo.multiply %903, %688 : tensor<64xf32>
    %905 = stablehlo.subtract %arg7, %904 : tensor<64xf32>
    %906 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %907 = stablehlo.multiply %906, %574 : tensor<64x128xf32>
    %908 = stablehlo.subtract %arg8, %907 : tensor<64x128xf32>
    %909 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %910 = stablehlo.multiply %909, %548 : tensor<128x64xf32>
    %911 = stablehlo.subtract %arg9, %910 : tensor<128x64xf32>
    %912 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %913 = stablehlo.multiply %912, %613 : tensor<64x64xf32>
    %914 = stablehlo.subtract %arg10, %913 : tensor<64x64xf32>
    %915 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %916 = stablehlo.multiply %915, %677 : tensor<64x192xf32>
    %917 = stablehlo.subtract %arg11, %916 : tensor<64x192xf32>
    %918 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %919 = stablehlo.multiply %918, %887 : tensor<256x64xf32>
    %920 = stablehlo.subtract %arg12, %919 : tensor<256x64xf32>
    return %890, %893, %896, %899, %902, %905, %908, %911, %914, %917, %920, %516 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @_one_hot(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> {jax.global_constant = "s"} loc(unknown), %arg2: tensor<?x?xi32> loc(unknown)) -> tensor<?x?x256xf32> {
    %c = stablehlo.constant dense<256> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<1> : tensor<1xi32>
    %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %1 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.concatenate %0, %1, %c_0, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %3 = stablehlo.dynamic_broadcast_in_dim %arg2, %2, dims = [0, 1] : (tensor<?x?xi32>, tensor<3xi32>) -> tensor<?x?x1xi32>
    %4 = stablehlo.iota dim = 2 : tensor<1x1x256xi32>
    %5 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %6 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %7 = stablehlo.concatenate %5, %6, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %8 = stablehlo.dynamic_broadcast_in_dim %3, %7, dims = [0, 1, 2] : (tensor<?x?x1xi32>, tensor<3xi32>) -> tensor<?x?x256xi32>
    %9 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %10 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %11 = stablehlo.concatenate %9, %10, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %12 = stablehlo.dynamic_broadcast_in_dim %4, %11, dims = [0, 1, 2] : (tensor<1x1x256xi32>, tensor<3xi32>) -> tensor<?x?x256xi32>
    %13 = stablehlo.compare EQ, %8, %12, SIGNED : (tensor<?x?x256xi32>, tensor<?x?x256xi32>) -> tensor<?x?x256xi1>
    %14 = stablehlo.convert %13 : (tensor<?x?x256xi1>) -> tensor<?x?x256xf32>
    return %14 : tensor<?x?x256xf32>
  }
}
