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
    stablehlo.custom_call @shape_assertion(%4, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[1].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %5 = stablehlo.compare GE, %1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%5, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 's'. Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[1].shape[0] (= {0}), 's' = {1} from specification 's' for dimension args[1].shape[1] (= {1}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
    %6 = stablehlo.compare EQ, %2, %0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%6, %2, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[2].shape[0] (= {0}) and the specification 'b' (= {1}). Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {1} from specification 'b' for dimension args[1].shape[0] (= {1}), 's' = {2} from specification 's' for dimension args[1].shape[1] (= {2}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %7 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%7, %3, %1, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[2].shape[1] (= {0}) and the specification 's' (= {1}). Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {2} from specification 'b' for dimension args[1].shape[0] (= {2}), 's' = {1} from specification 's' for dimension args[1].shape[1] (= {1}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %8 = stablehlo.convert %1 : tensor<i32>
    %9 = stablehlo.multiply %8, %c_1 : tensor<i32>
    %10 = stablehlo.add %9, %c_0 : tensor<i32>
    %11 = stablehlo.compare GE, %10, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %12 = stablehlo.convert %1 : tensor<i32>
    %13 = stablehlo.multiply %12, %c_1 : tensor<i32>
    %14 = stablehlo.add %13, %c_0 : tensor<i32>
    stablehlo.custom_call @shape_assertion(%11, %14, %0, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the symbolic shape constraint s <= 2048. Expected '- s + 2048' to be greater or equal to 0, but found {0}.  Using the following polymorphic shapes specifications: args[1].shape = (b, s),args[2].shape = (b, s). Obtained dimension variables: 'b' = {1} from specification 'b' for dimension args[1].shape[0] (= {1}), 's' = {2} from specification 's' for dimension args[1].shape[1] (= {2}), . Please see https://docs.jax.dev/en/latest/501/shape-polymorphism.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    %15:12 = call @_wrapped_jax_export_main(%0, %1, %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12) : (tensor<i32>, tensor<i32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<?x?xi32>, tensor<?x?xi32>) -> (tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>)
    return %15#0, %15#1, %15#2, %15#3, %15#4, %15#5, %15#6, %15#7, %15#8, %15#9, %15#10, %15#11 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> {jax.global_constant = "s"} loc(unknown), %arg2: tensor<64xf32> loc("p['blocks'][0]['g']"), %arg3: tensor<64x128xf32> loc("p['blocks'][0]['w1']"), %arg4: tensor<128x64xf32> loc("p['blocks'][0]['w2']"), %arg5: tensor<64x64xf32> loc("p['blocks'][0]['wo']"), %arg6: tensor<64x192xf32> loc("p['blocks'][0]['wqkv']"), %arg7: tensor<64xf32> loc("p['blocks'][1]['g']"), %arg8: tensor<64x128xf32> loc("p['blocks'][1]['w1']"), %arg9: tensor<128x64xf32> loc("p['blocks'][1]['w2']"), %arg10: tensor<64x64xf32> loc("p['blocks'][1]['wo']"), %arg11: tensor<64x192xf32> loc("p['blocks'][1]['wqkv']"), %arg12: tensor<256x64xf32> loc("p['wte']"), %arg13: tensor<?x?xi32> loc("tokens"), %arg14: tensor<?x?xi32> loc("targets")) -> (tensor<64xf32> {jax.result_info = "result[0]['blocks'][0]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][0]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][0]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][0]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][0]['wqkv']"}, tensor<64xf32> {jax.result_info = "result[0]['blocks'][1]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][1]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][1]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][1]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][1]['wqkv']"}, tensor<256x64xf32> {jax.result_info = "result[0]['wte']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %c = stablehlo.constant dense<256> : tensor<1xi32>
    %cst_0 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %cst_1 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %cst_2 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
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
    %226 = stablehlo.dynamic_broadcast_in_dim %cst_2, %225, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %227 = stablehlo.multiply %226, %222 : tensor<?x?x128xf32>
    %228 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %229 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %230 = stablehlo.concatenate %228, %229, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %231 = stablehlo.dynamic_broadcast_in_dim %cst_1, %230, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %232 = stablehlo.multiply %231, %221 : tensor<?x?x128xf32>
    %233 = stablehlo.add %219, %232 : tensor<?x?x128xf32>
    %234 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %235 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %236 = stablehlo.concatenate %234, %235, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %237 = stablehlo.dynamic_broadcast_in_dim %cst_0, %236, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %238 = stablehlo.multiply %237, %233 : tensor<?x?x128xf32>
    %239 = stablehlo.tanh %238 : tensor<?x?x128xf32>
    %240 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %241 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %242 = stablehlo.concatenate %240, %241, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %243 = stablehlo.dynamic_broadcast_in_dim %cst_4, %242, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %244 = stablehlo.add %243, %239 : tensor<?x?x128xf32>
    %245 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %246 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %247 = stablehlo.concatenate %245, %246, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %248 = stablehlo.dynamic_broadcast_in_dim %cst_4, %247, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %249 = stablehlo.subtract %248, %239 : tensor<?x?x128xf32>
    %250 = stablehlo.multiply %244, %249 : tensor<?x?x128xf32>
    %251 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %252 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %253 = stablehlo.concatenate %251, %252, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %254 = stablehlo.dynamic_broadcast_in_dim %cst_4, %253, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %255 = stablehlo.add %254, %239 : tensor<?x?x128xf32>
    %256 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %257 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %258 = stablehlo.concatenate %256, %257, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %259 = stablehlo.dynamic_broadcast_in_dim %cst_3, %258, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %260 = stablehlo.multiply %259, %255 : tensor<?x?x128xf32>
    %261 = stablehlo.multiply %219, %260 : tensor<?x?x128xf32>
    %262 = stablehlo.dot_general %261, %arg4, contracting_dims = [2] x [0] : (tensor<?x?x128xf32>, tensor<128x64xf32>) -> tensor<?x?x64xf32>
    %263 = stablehlo.add %184, %262 : tensor<?x?x64xf32>
    %264 = stablehlo.multiply %263, %263 : tensor<?x?x64xf32>
    %265 = stablehlo.reduce(%264 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %266 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %267 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %268 = stablehlo.concatenate %266, %267, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %269 = stablehlo.dynamic_broadcast_in_dim %265, %268, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %270 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %271 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %272 = stablehlo.concatenate %270, %271, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %273 = stablehlo.dynamic_broadcast_in_dim %cst_19, %272, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %274 = stablehlo.divide %269, %273 : tensor<?x?x1xf32>
    %275 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %276 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %277 = stablehlo.concatenate %275, %276, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %278 = stablehlo.dynamic_broadcast_in_dim %cst_14, %277, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %279 = stablehlo.add %274, %278 : tensor<?x?x1xf32>
    %280 = stablehlo.rsqrt %279 : tensor<?x?x1xf32>
    %281 = stablehlo.divide %280, %279 : tensor<?x?x1xf32>
    %282 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %283 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %284 = stablehlo.concatenate %282, %283, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %285 = stablehlo.dynamic_broadcast_in_dim %cst_13, %284, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %286 = stablehlo.multiply %285, %281 : tensor<?x?x1xf32>
    %287 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %288 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %289 = stablehlo.concatenate %287, %288, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %290 = stablehlo.dynamic_broadcast_in_dim %280, %289, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %291 = stablehlo.multiply %263, %290 : tensor<?x?x64xf32>
    %292 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %293 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %294 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %295 = stablehlo.concatenate %293, %294, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %296 = stablehlo.dynamic_broadcast_in_dim %292, %295, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %297 = stablehlo.multiply %291, %296 : tensor<?x?x64xf32>
    %298 = stablehlo.dot_general %297, %arg11, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    %299 = stablehlo.concatenate %c_12, %c_12, %c_12, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %300 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %301 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %302 = stablehlo.concatenate %300, %301, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %303 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %304 = stablehlo.real_dynamic_slice %298, %299, %302, %303 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %305 = stablehlo.concatenate %c_12, %c_12, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %306 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %307 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %308 = stablehlo.concatenate %306, %307, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %309 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %310 = stablehlo.real_dynamic_slice %298, %305, %308, %309 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %311 = stablehlo.concatenate %c_12, %c_12, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %312 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %313 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %314 = stablehlo.concatenate %312, %313, %c_10, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %315 = stablehlo.concatenate %c_20, %c_20, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %316 = stablehlo.real_dynamic_slice %298, %311, %314, %315 : (tensor<?x?x192xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %317 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %318 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %319 = stablehlo.concatenate %317, %318, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %320 = stablehlo.dynamic_reshape %304, %319 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %321 = stablehlo.transpose %320, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %322 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %323 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %324 = stablehlo.concatenate %322, %323, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %325 = stablehlo.dynamic_reshape %310, %324 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %326 = stablehlo.transpose %325, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %327 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %328 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %329 = stablehlo.concatenate %327, %328, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %330 = stablehlo.dynamic_reshape %316, %329 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %331 = stablehlo.transpose %330, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %332 = stablehlo.transpose %326, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %333 = stablehlo.dot_general %321, %332, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %334 = stablehlo.sqrt %cst_7 : tensor<f32>
    %335 = stablehlo.convert %334 : tensor<f32>
    %336 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %337 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %338 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %339 = stablehlo.concatenate %336, %c_9, %337, %338, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %340 = stablehlo.dynamic_broadcast_in_dim %335, %339, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %341 = stablehlo.divide %333, %340 : tensor<?x4x?x?xf32>
    %342 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %343 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %344 = stablehlo.concatenate %342, %343, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %345 = stablehlo.dynamic_iota %344, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>
    %346 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %347 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %348 = stablehlo.concatenate %346, %347, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %349 = stablehlo.dynamic_iota %348, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi32>
    %350 = stablehlo.compare GT, %349, %345, SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
    %351 = stablehlo.convert %350 : (tensor<?x?xi1>) -> tensor<?x?xf32>
    %352 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %353 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %354 = stablehlo.concatenate %352, %353, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %355 = stablehlo.dynamic_broadcast_in_dim %cst_6, %354, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %356 = stablehlo.multiply %351, %355 : tensor<?x?xf32>
    %357 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %358 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %359 = stablehlo.concatenate %c_20, %c_20, %357, %358, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %360 = stablehlo.dynamic_broadcast_in_dim %356, %359, dims = [2, 3] : (tensor<?x?xf32>, tensor<4xi32>) -> tensor<1x1x?x?xf32>
    %361 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %362 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %363 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %364 = stablehlo.concatenate %361, %c_9, %362, %363, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %365 = stablehlo.dynamic_broadcast_in_dim %360, %364, dims = [0, 1, 2, 3] : (tensor<1x1x?x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %366 = stablehlo.add %341, %365 : tensor<?x4x?x?xf32>
    %367 = stablehlo.reduce(%366 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %368 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %369 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %370 = stablehlo.concatenate %368, %c_9, %369, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %371 = stablehlo.dynamic_broadcast_in_dim %cst_5, %370, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x?xf32>
    %372 = stablehlo.maximum %371, %367 : tensor<?x4x?xf32>
    %373 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %374 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %375 = stablehlo.concatenate %373, %c_9, %374, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %376 = stablehlo.dynamic_broadcast_in_dim %372, %375, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %377 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %378 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %379 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %380 = stablehlo.concatenate %377, %c_9, %378, %379, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %381 = stablehlo.dynamic_broadcast_in_dim %376, %380, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %382 = stablehlo.subtract %366, %381 : tensor<?x4x?x?xf32>
    %383 = stablehlo.exponential %382 : tensor<?x4x?x?xf32>
    %384 = stablehlo.reduce(%383 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %385 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %386 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %387 = stablehlo.concatenate %385, %c_9, %386, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %388 = stablehlo.dynamic_broadcast_in_dim %384, %387, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %389 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %390 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %391 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %392 = stablehlo.concatenate %389, %c_9, %390, %391, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %393 = stablehlo.dynamic_broadcast_in_dim %388, %392, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %394 = stablehlo.divide %383, %393 : tensor<?x4x?x?xf32>
    %395 = stablehlo.multiply %388, %388 : tensor<?x4x?x1xf32>
    %396 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %397 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %398 = stablehlo.concatenate %396, %c_9, %397, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %399 = stablehlo.dynamic_broadcast_in_dim %cst_4, %398, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %400 = stablehlo.divide %399, %395 : tensor<?x4x?x1xf32>
    %401 = stablehlo.dot_general %394, %331, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %402 = stablehlo.transpose %401, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %403 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %404 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %405 = stablehlo.concatenate %403, %404, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %406 = stablehlo.dynamic_reshape %402, %405 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %407 = stablehlo.dot_general %406, %arg10, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %408 = stablehlo.add %263, %407 : tensor<?x?x64xf32>
    %409 = stablehlo.multiply %408, %408 : tensor<?x?x64xf32>
    %410 = stablehlo.reduce(%409 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %411 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %412 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %413 = stablehlo.concatenate %411, %412, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %414 = stablehlo.dynamic_broadcast_in_dim %410, %413, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %415 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %416 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %417 = stablehlo.concatenate %415, %416, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %418 = stablehlo.dynamic_broadcast_in_dim %cst_19, %417, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %419 = stablehlo.divide %414, %418 : tensor<?x?x1xf32>
    %420 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %421 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %422 = stablehlo.concatenate %420, %421, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %423 = stablehlo.dynamic_broadcast_in_dim %cst_14, %422, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %424 = stablehlo.add %419, %423 : tensor<?x?x1xf32>
    %425 = stablehlo.rsqrt %424 : tensor<?x?x1xf32>
    %426 = stablehlo.divide %425, %424 : tensor<?x?x1xf32>
    %427 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %428 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %429 = stablehlo.concatenate %427, %428, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %430 = stablehlo.dynamic_broadcast_in_dim %cst_13, %429, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %431 = stablehlo.multiply %430, %426 : tensor<?x?x1xf32>
    %432 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %433 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %434 = stablehlo.concatenate %432, %433, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %435 = stablehlo.dynamic_broadcast_in_dim %425, %434, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %436 = stablehlo.multiply %408, %435 : tensor<?x?x64xf32>
    %437 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %438 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %439 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %440 = stablehlo.concatenate %438, %439, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %441 = stablehlo.dynamic_broadcast_in_dim %437, %440, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %442 = stablehlo.multiply %436, %441 : tensor<?x?x64xf32>
    %443 = stablehlo.dot_general %442, %arg8, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %444 = stablehlo.multiply %443, %443 : tensor<?x?x128xf32>
    %445 = stablehlo.multiply %444, %443 : tensor<?x?x128xf32>
    %446 = stablehlo.multiply %443, %443 : tensor<?x?x128xf32>
    %447 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %448 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %449 = stablehlo.concatenate %447, %448, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %450 = stablehlo.dynamic_broadcast_in_dim %cst_2, %449, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %451 = stablehlo.multiply %450, %446 : tensor<?x?x128xf32>
    %452 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %453 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %454 = stablehlo.concatenate %452, %453, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %455 = stablehlo.dynamic_broadcast_in_dim %cst_1, %454, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %456 = stablehlo.multiply %455, %445 : tensor<?x?x128xf32>
    %457 = stablehlo.add %443, %456 : tensor<?x?x128xf32>
    %458 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %459 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %460 = stablehlo.concatenate %458, %459, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %461 = stablehlo.dynamic_broadcast_in_dim %cst_0, %460, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %462 = stablehlo.multiply %461, %457 : tensor<?x?x128xf32>
    %463 = stablehlo.tanh %462 : tensor<?x?x128xf32>
    %464 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %465 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %466 = stablehlo.concatenate %464, %465, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %467 = stablehlo.dynamic_broadcast_in_dim %cst_4, %466, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %468 = stablehlo.add %467, %463 : tensor<?x?x128xf32>
    %469 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %470 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %471 = stablehlo.concatenate %469, %470, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %472 = stablehlo.dynamic_broadcast_in_dim %cst_4, %471, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %473 = stablehlo.subtract %472, %463 : tensor<?x?x128xf32>
    %474 = stablehlo.multiply %468, %473 : tensor<?x?x128xf32>
    %475 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %476 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %477 = stablehlo.concatenate %475, %476, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %478 = stablehlo.dynamic_broadcast_in_dim %cst_4, %477, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %479 = stablehlo.add %478, %463 : tensor<?x?x128xf32>
    %480 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %481 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %482 = stablehlo.concatenate %480, %481, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %483 = stablehlo.dynamic_broadcast_in_dim %cst_3, %482, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %484 = stablehlo.multiply %483, %479 : tensor<?x?x128xf32>
    %485 = stablehlo.multiply %443, %484 : tensor<?x?x128xf32>
    %486 = stablehlo.dot_general %485, %arg9, contracting_dims = [2] x [0] : (tensor<?x?x128xf32>, tensor<128x64xf32>) -> tensor<?x?x64xf32>
    %487 = stablehlo.add %408, %486 : tensor<?x?x64xf32>
    %488 = stablehlo.transpose %arg12, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %489 = stablehlo.dot_general %487, %488, contracting_dims = [2] x [0] : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
    %490 = stablehlo.reduce(%489 init: %cst_5) applies stablehlo.maximum across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %491 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %492 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %493 = stablehlo.concatenate %491, %492, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %494 = stablehlo.dynamic_broadcast_in_dim %cst_5, %493, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %495 = stablehlo.maximum %494, %490 : tensor<?x?xf32>
    %496 = stablehlo.is_finite %495 : (tensor<?x?xf32>) -> tensor<?x?xi1>
    %497 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %498 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %499 = stablehlo.concatenate %497, %498, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %500 = stablehlo.dynamic_broadcast_in_dim %cst_15, %499, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %501 = stablehlo.select %496, %495, %500 : tensor<?x?xi1>, tensor<?x?xf32>
    %502 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %503 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %504 = stablehlo.concatenate %502, %503, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %505 = stablehlo.dynamic_broadcast_in_dim %501, %504, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %506 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %507 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %508 = stablehlo.concatenate %506, %507, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %509 = stablehlo.dynamic_broadcast_in_dim %505, %508, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %510 = stablehlo.subtract %489, %509 : tensor<?x?x256xf32>
    %511 = stablehlo.exponential %510 : tensor<?x?x256xf32>
    %512 = stablehlo.reduce(%511 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %513 = stablehlo.abs %512 : tensor<?x?xf32>
    %514 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %515 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %516 = stablehlo.concatenate %514, %515, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %517 = stablehlo.dynamic_broadcast_in_dim %cst_15, %516, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %518 = stablehlo.compare GE, %512, %517, FLOAT : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xi1>
    %519 = stablehlo.log %513 : tensor<?x?xf32>
    %520 = stablehlo.add %519, %501 : tensor<?x?xf32>
    %521 = call @_one_hot(%arg0, %arg1, %arg14) : (tensor<i32>, tensor<i32>, tensor<?x?xi32>) -> tensor<?x?x256xf32>
    %522 = stablehlo.multiply %489, %521 : tensor<?x?x256xf32>
    %523 = stablehlo.reduce(%522 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?xf32>
    %524 = stablehlo.subtract %520, %523 : tensor<?x?xf32>
    %525 = stablehlo.multiply %arg1, %arg0 : tensor<i32>
    %526 = stablehlo.convert %525 : (tensor<i32>) -> tensor<f32>
    %527 = stablehlo.reduce(%524 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<f32>
    %528 = stablehlo.divide %527, %526 : tensor<f32>
    %529 = stablehlo.divide %cst_4, %526 : tensor<f32>
    %530 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %531 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %532 = stablehlo.concatenate %530, %531, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %533 = stablehlo.dynamic_broadcast_in_dim %529, %532, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %534 = stablehlo.negate %533 : tensor<?x?xf32>
    %535 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %536 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %537 = stablehlo.concatenate %535, %536, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %538 = stablehlo.dynamic_broadcast_in_dim %534, %537, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %539 = stablehlo.multiply %538, %521 : tensor<?x?x256xf32>
    %540 = stablehlo.divide %533, %513 : tensor<?x?xf32>
    %541 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %542 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %543 = stablehlo.concatenate %541, %542, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %544 = stablehlo.dynamic_broadcast_in_dim %cst_15, %543, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %545 = stablehlo.select %518, %544, %540 : tensor<?x?xi1>, tensor<?x?xf32>
    %546 = stablehlo.select %518, %540, %544 : tensor<?x?xi1>, tensor<?x?xf32>
    %547 = stablehlo.negate %545 : tensor<?x?xf32>
    %548 = stablehlo.add %546, %547 : tensor<?x?xf32>
    %549 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %550 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %551 = stablehlo.concatenate %549, %550, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %552 = stablehlo.dynamic_broadcast_in_dim %548, %551, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x256xf32>
    %553 = stablehlo.multiply %552, %511 : tensor<?x?x256xf32>
    %554 = stablehlo.add %539, %553 : tensor<?x?x256xf32>
    %555 = stablehlo.dot_general %554, %487, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x256xf32>, tensor<?x?x64xf32>) -> tensor<256x64xf32>
    %556 = stablehlo.transpose %555, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %557 = stablehlo.dot_general %554, %488, contracting_dims = [2] x [1] : (tensor<?x?x256xf32>, tensor<64x256xf32>) -> tensor<?x?x64xf32>
    %558 = stablehlo.transpose %556, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %559 = stablehlo.dot_general %557, %485, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x128xf32>) -> tensor<64x128xf32>
    %560 = stablehlo.transpose %559, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %561 = stablehlo.dot_general %557, %arg9, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %562 = stablehlo.multiply %443, %561 : tensor<?x?x128xf32>
    %563 = stablehlo.multiply %561, %484 : tensor<?x?x128xf32>
    %564 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %565 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %566 = stablehlo.concatenate %564, %565, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %567 = stablehlo.dynamic_broadcast_in_dim %cst_3, %566, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %568 = stablehlo.multiply %567, %562 : tensor<?x?x128xf32>
    %569 = stablehlo.multiply %568, %474 : tensor<?x?x128xf32>
    %570 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %571 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %572 = stablehlo.concatenate %570, %571, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %573 = stablehlo.dynamic_broadcast_in_dim %cst_0, %572, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %574 = stablehlo.multiply %573, %569 : tensor<?x?x128xf32>
    %575 = stablehlo.add %563, %574 : tensor<?x?x128xf32>
    %576 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %577 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %578 = stablehlo.concatenate %576, %577, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %579 = stablehlo.dynamic_broadcast_in_dim %cst_1, %578, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %580 = stablehlo.multiply %579, %574 : tensor<?x?x128xf32>
    %581 = stablehlo.multiply %580, %451 : tensor<?x?x128xf32>
    %582 = stablehlo.add %575, %581 : tensor<?x?x128xf32>
    %583 = stablehlo.dot_general %582, %442, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x128xf32>, tensor<?x?x64xf32>) -> tensor<128x64xf32>
    %584 = stablehlo.transpose %583, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %585 = stablehlo.dot_general %582, %arg8, contracting_dims = [2] x [1] : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %586 = stablehlo.multiply %436, %585 : tensor<?x?x64xf32>
    %587 = stablehlo.reduce(%586 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %588 = stablehlo.reshape %587 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %589 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %590 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %591 = stablehlo.concatenate %589, %590, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %592 = stablehlo.dynamic_broadcast_in_dim %437, %591, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %593 = stablehlo.multiply %585, %592 : tensor<?x?x64xf32>
    %594 = stablehlo.reduce(%588 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %595 = stablehlo.multiply %408, %593 : tensor<?x?x64xf32>
    %596 = stablehlo.reduce(%595 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %597 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %598 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %599 = stablehlo.concatenate %597, %598, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %600 = stablehlo.dynamic_reshape %596, %599 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %601 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %602 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %603 = stablehlo.concatenate %601, %602, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %604 = stablehlo.dynamic_broadcast_in_dim %425, %603, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %605 = stablehlo.multiply %593, %604 : tensor<?x?x64xf32>
    %606 = stablehlo.add %557, %605 : tensor<?x?x64xf32>
    %607 = stablehlo.multiply %600, %431 : tensor<?x?x1xf32>
    %608 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %609 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %610 = stablehlo.concatenate %608, %609, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %611 = stablehlo.dynamic_broadcast_in_dim %cst_19, %610, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %612 = stablehlo.divide %607, %611 : tensor<?x?x1xf32>
    %613 = stablehlo.reduce(%612 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %614 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %615 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %616 = stablehlo.concatenate %614, %615, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %617 = stablehlo.dynamic_broadcast_in_dim %613, %616, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %618 = stablehlo.multiply %408, %617 : tensor<?x?x64xf32>
    %619 = stablehlo.multiply %617, %408 : tensor<?x?x64xf32>
    %620 = stablehlo.add %606, %619 : tensor<?x?x64xf32>
    %621 = stablehlo.add %620, %618 : tensor<?x?x64xf32>
    %622 = stablehlo.dot_general %621, %406, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<64x64xf32>
    %623 = stablehlo.transpose %622, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %624 = stablehlo.dot_general %621, %arg10, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %625 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %626 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %627 = stablehlo.concatenate %625, %626, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %628 = stablehlo.dynamic_reshape %624, %627 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %629 = stablehlo.transpose %628, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %630 = stablehlo.dot_general %629, %394, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x16x?xf32>
    %631 = stablehlo.transpose %630, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %632 = stablehlo.dot_general %629, %331, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
    %633 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %634 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %635 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %636 = stablehlo.concatenate %633, %c_9, %634, %635, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %637 = stablehlo.dynamic_broadcast_in_dim %400, %636, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %638 = stablehlo.multiply %632, %637 : tensor<?x4x?x?xf32>
    %639 = stablehlo.multiply %638, %383 : tensor<?x4x?x?xf32>
    %640 = stablehlo.reduce(%639 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %641 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %642 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %643 = stablehlo.concatenate %641, %c_9, %642, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %644 = stablehlo.dynamic_reshape %640, %643 : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %645 = stablehlo.negate %644 : tensor<?x4x?x1xf32>
    %646 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %647 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %648 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %649 = stablehlo.concatenate %646, %c_9, %647, %648, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %650 = stablehlo.dynamic_broadcast_in_dim %388, %649, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %651 = stablehlo.divide %632, %650 : tensor<?x4x?x?xf32>
    %652 = stablehlo.reduce(%645 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x1xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %653 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %654 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %655 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %656 = stablehlo.concatenate %653, %c_9, %654, %655, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %657 = stablehlo.dynamic_broadcast_in_dim %652, %656, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %658 = stablehlo.add %651, %657 : tensor<?x4x?x?xf32>
    %659 = stablehlo.multiply %658, %383 : tensor<?x4x?x?xf32>
    %660 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %661 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %662 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %663 = stablehlo.concatenate %660, %c_9, %661, %662, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %664 = stablehlo.dynamic_broadcast_in_dim %335, %663, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %665 = stablehlo.divide %659, %664 : tensor<?x4x?x?xf32>
    %666 = stablehlo.dot_general %665, %321, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %667 = stablehlo.transpose %666, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %668 = stablehlo.dot_general %665, %332, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %669 = stablehlo.transpose %667, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %670 = stablehlo.transpose %631, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %671 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %672 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %673 = stablehlo.concatenate %671, %672, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %674 = stablehlo.dynamic_reshape %670, %673 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %675 = stablehlo.transpose %669, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %676 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %677 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %678 = stablehlo.concatenate %676, %677, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %679 = stablehlo.dynamic_reshape %675, %678 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %680 = stablehlo.transpose %668, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %681 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %682 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %683 = stablehlo.concatenate %681, %682, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %684 = stablehlo.dynamic_reshape %680, %683 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %685 = stablehlo.concatenate %684, %679, %674, dim = 2 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
    %686 = stablehlo.dot_general %685, %297, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x192xf32>, tensor<?x?x64xf32>) -> tensor<192x64xf32>
    %687 = stablehlo.transpose %686, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %688 = stablehlo.dot_general %685, %arg11, contracting_dims = [2] x [1] : (tensor<?x?x192xf32>, tensor<64x192xf32>) -> tensor<?x?x64xf32>
    %689 = stablehlo.multiply %291, %688 : tensor<?x?x64xf32>
    %690 = stablehlo.reduce(%689 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %691 = stablehlo.reshape %690 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %692 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %693 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %694 = stablehlo.concatenate %692, %693, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %695 = stablehlo.dynamic_broadcast_in_dim %292, %694, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %696 = stablehlo.multiply %688, %695 : tensor<?x?x64xf32>
    %697 = stablehlo.reduce(%691 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %698 = stablehlo.add %594, %697 : tensor<64xf32>
    %699 = stablehlo.multiply %263, %696 : tensor<?x?x64xf32>
    %700 = stablehlo.reduce(%699 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %701 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %702 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %703 = stablehlo.concatenate %701, %702, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %704 = stablehlo.dynamic_reshape %700, %703 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %705 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %706 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %707 = stablehlo.concatenate %705, %706, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %708 = stablehlo.dynamic_broadcast_in_dim %280, %707, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %709 = stablehlo.multiply %696, %708 : tensor<?x?x64xf32>
    %710 = stablehlo.add %621, %709 : tensor<?x?x64xf32>
    %711 = stablehlo.multiply %704, %286 : tensor<?x?x1xf32>
    %712 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %713 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %714 = stablehlo.concatenate %712, %713, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %715 = stablehlo.dynamic_broadcast_in_dim %cst_19, %714, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %716 = stablehlo.divide %711, %715 : tensor<?x?x1xf32>
    %717 = stablehlo.reduce(%716 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %718 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %719 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %720 = stablehlo.concatenate %718, %719, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %721 = stablehlo.dynamic_broadcast_in_dim %717, %720, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %722 = stablehlo.multiply %263, %721 : tensor<?x?x64xf32>
    %723 = stablehlo.multiply %721, %263 : tensor<?x?x64xf32>
    %724 = stablehlo.add %710, %723 : tensor<?x?x64xf32>
    %725 = stablehlo.add %724, %722 : tensor<?x?x64xf32>
    %726 = stablehlo.dot_general %725, %261, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x128xf32>) -> tensor<64x128xf32>
    %727 = stablehlo.transpose %726, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %728 = stablehlo.dot_general %725, %arg4, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %729 = stablehlo.multiply %219, %728 : tensor<?x?x128xf32>
    %730 = stablehlo.multiply %728, %260 : tensor<?x?x128xf32>
    %731 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %732 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %733 = stablehlo.concatenate %731, %732, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %734 = stablehlo.dynamic_broadcast_in_dim %cst_3, %733, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %735 = stablehlo.multiply %734, %729 : tensor<?x?x128xf32>
    %736 = stablehlo.multiply %735, %250 : tensor<?x?x128xf32>
    %737 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %738 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %739 = stablehlo.concatenate %737, %738, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %740 = stablehlo.dynamic_broadcast_in_dim %cst_0, %739, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %741 = stablehlo.multiply %740, %736 : tensor<?x?x128xf32>
    %742 = stablehlo.add %730, %741 : tensor<?x?x128xf32>
    %743 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %744 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %745 = stablehlo.concatenate %743, %744, %c_11, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %746 = stablehlo.dynamic_broadcast_in_dim %cst_1, %745, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x128xf32>
    %747 = stablehlo.multiply %746, %741 : tensor<?x?x128xf32>
    %748 = stablehlo.multiply %747, %227 : tensor<?x?x128xf32>
    %749 = stablehlo.add %742, %748 : tensor<?x?x128xf32>
    %750 = stablehlo.dot_general %749, %218, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x128xf32>, tensor<?x?x64xf32>) -> tensor<128x64xf32>
    %751 = stablehlo.transpose %750, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %752 = stablehlo.dot_general %749, %arg3, contracting_dims = [2] x [1] : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %753 = stablehlo.multiply %212, %752 : tensor<?x?x64xf32>
    %754 = stablehlo.reduce(%753 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %755 = stablehlo.reshape %754 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %756 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %757 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %758 = stablehlo.concatenate %756, %757, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %759 = stablehlo.dynamic_broadcast_in_dim %213, %758, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %760 = stablehlo.multiply %752, %759 : tensor<?x?x64xf32>
    %761 = stablehlo.reduce(%755 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %762 = stablehlo.multiply %184, %760 : tensor<?x?x64xf32>
    %763 = stablehlo.reduce(%762 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %764 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %765 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %766 = stablehlo.concatenate %764, %765, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %767 = stablehlo.dynamic_reshape %763, %766 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %768 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %769 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %770 = stablehlo.concatenate %768, %769, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %771 = stablehlo.dynamic_broadcast_in_dim %201, %770, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %772 = stablehlo.multiply %760, %771 : tensor<?x?x64xf32>
    %773 = stablehlo.add %725, %772 : tensor<?x?x64xf32>
    %774 = stablehlo.multiply %767, %207 : tensor<?x?x1xf32>
    %775 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %776 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %777 = stablehlo.concatenate %775, %776, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %778 = stablehlo.dynamic_broadcast_in_dim %cst_19, %777, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %779 = stablehlo.divide %774, %778 : tensor<?x?x1xf32>
    %780 = stablehlo.reduce(%779 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %781 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %782 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %783 = stablehlo.concatenate %781, %782, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %784 = stablehlo.dynamic_broadcast_in_dim %780, %783, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %785 = stablehlo.multiply %184, %784 : tensor<?x?x64xf32>
    %786 = stablehlo.multiply %784, %184 : tensor<?x?x64xf32>
    %787 = stablehlo.add %773, %786 : tensor<?x?x64xf32>
    %788 = stablehlo.add %787, %785 : tensor<?x?x64xf32>
    %789 = stablehlo.dot_general %788, %182, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<64x64xf32>
    %790 = stablehlo.transpose %789, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %791 = stablehlo.dot_general %788, %arg5, contracting_dims = [2] x [1] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %792 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %793 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %794 = stablehlo.concatenate %792, %793, %c_9, %c_8, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %795 = stablehlo.dynamic_reshape %791, %794 : (tensor<?x?x64xf32>, tensor<4xi32>) -> tensor<?x?x4x16xf32>
    %796 = stablehlo.transpose %795, dims = [0, 2, 1, 3] : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %797 = stablehlo.dot_general %796, %170, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x16x?xf32>
    %798 = stablehlo.transpose %797, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %799 = stablehlo.dot_general %796, %107, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
    %800 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %801 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %802 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %803 = stablehlo.concatenate %800, %c_9, %801, %802, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %804 = stablehlo.dynamic_broadcast_in_dim %176, %803, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %805 = stablehlo.multiply %799, %804 : tensor<?x4x?x?xf32>
    %806 = stablehlo.multiply %805, %159 : tensor<?x4x?x?xf32>
    %807 = stablehlo.reduce(%806 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %808 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %809 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %810 = stablehlo.concatenate %808, %c_9, %809, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %811 = stablehlo.dynamic_reshape %807, %810 : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x1xf32>
    %812 = stablehlo.negate %811 : tensor<?x4x?x1xf32>
    %813 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %814 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %815 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %816 = stablehlo.concatenate %813, %c_9, %814, %815, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %817 = stablehlo.dynamic_broadcast_in_dim %164, %816, dims = [0, 1, 2, 3] : (tensor<?x4x?x1xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %818 = stablehlo.divide %799, %817 : tensor<?x4x?x?xf32>
    %819 = stablehlo.reduce(%812 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<?x4x?x1xf32>, tensor<f32>) -> tensor<?x4x?xf32>
    %820 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %821 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %822 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %823 = stablehlo.concatenate %820, %c_9, %821, %822, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %824 = stablehlo.dynamic_broadcast_in_dim %819, %823, dims = [0, 1, 2] : (tensor<?x4x?xf32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %825 = stablehlo.add %818, %824 : tensor<?x4x?x?xf32>
    %826 = stablehlo.multiply %825, %159 : tensor<?x4x?x?xf32>
    %827 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %828 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %829 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %830 = stablehlo.concatenate %827, %c_9, %828, %829, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
    %831 = stablehlo.dynamic_broadcast_in_dim %111, %830, dims = [] : (tensor<f32>, tensor<4xi32>) -> tensor<?x4x?x?xf32>
    %832 = stablehlo.divide %826, %831 : tensor<?x4x?x?xf32>
    %833 = stablehlo.dot_general %832, %97, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %834 = stablehlo.transpose %833, dims = [0, 1, 3, 2] : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
    %835 = stablehlo.dot_general %832, %108, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<?x4x?x?xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %836 = stablehlo.transpose %834, dims = [0, 1, 3, 2] : (tensor<?x4x16x?xf32>) -> tensor<?x4x?x16xf32>
    %837 = stablehlo.transpose %798, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %838 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %839 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %840 = stablehlo.concatenate %838, %839, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %841 = stablehlo.dynamic_reshape %837, %840 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %842 = stablehlo.transpose %836, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %843 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %844 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %845 = stablehlo.concatenate %843, %844, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %846 = stablehlo.dynamic_reshape %842, %845 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %847 = stablehlo.transpose %835, dims = [0, 2, 1, 3] : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %848 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %849 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %850 = stablehlo.concatenate %848, %849, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %851 = stablehlo.dynamic_reshape %847, %850 : (tensor<?x?x4x16xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %852 = stablehlo.concatenate %851, %846, %841, dim = 2 : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
    %853 = stablehlo.dot_general %852, %73, contracting_dims = [0, 1] x [0, 1] : (tensor<?x?x192xf32>, tensor<?x?x64xf32>) -> tensor<192x64xf32>
    %854 = stablehlo.transpose %853, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %855 = stablehlo.dot_general %852, %arg6, contracting_dims = [2] x [1] : (tensor<?x?x192xf32>, tensor<64x192xf32>) -> tensor<?x?x64xf32>
    %856 = stablehlo.multiply %67, %855 : tensor<?x?x64xf32>
    %857 = stablehlo.reduce(%856 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<64xf32>
    %858 = stablehlo.reshape %857 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %859 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %860 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %861 = stablehlo.concatenate %859, %860, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %862 = stablehlo.dynamic_broadcast_in_dim %68, %861, dims = [0, 1, 2] : (tensor<1x1x64xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %863 = stablehlo.multiply %855, %862 : tensor<?x?x64xf32>
    %864 = stablehlo.reduce(%858 init: %cst_15) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %865 = stablehlo.add %761, %864 : tensor<64xf32>
    %866 = stablehlo.multiply %39, %863 : tensor<?x?x64xf32>
    %867 = stablehlo.reduce(%866 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?xf32>
    %868 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %869 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %870 = stablehlo.concatenate %868, %869, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %871 = stablehlo.dynamic_reshape %867, %870 : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %872 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %873 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %874 = stablehlo.concatenate %872, %873, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %875 = stablehlo.dynamic_broadcast_in_dim %56, %874, dims = [0, 1, 2] : (tensor<?x?x1xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %876 = stablehlo.multiply %863, %875 : tensor<?x?x64xf32>
    %877 = stablehlo.add %788, %876 : tensor<?x?x64xf32>
    %878 = stablehlo.multiply %871, %62 : tensor<?x?x1xf32>
    %879 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %880 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %881 = stablehlo.concatenate %879, %880, %c_20, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %882 = stablehlo.dynamic_broadcast_in_dim %cst_19, %881, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x?x1xf32>
    %883 = stablehlo.divide %878, %882 : tensor<?x?x1xf32>
    %884 = stablehlo.reduce(%883 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?xf32>
    %885 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %886 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
    %887 = stablehlo.concatenate %885, %886, %c_16, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %888 = stablehlo.dynamic_broadcast_in_dim %884, %887, dims = [0, 1] : (tensor<?x?xf32>, tensor<3xi32>) -> tensor<?x?x64xf32>
    %889 = stablehlo.multiply %39, %888 : tensor<?x?x64xf32>
    %890 = stablehlo.multiply %888, %39 : tensor<?x?x64xf32>
    %891 = stablehlo.add %877, %890 : tensor<?x?x64xf32>
    %892 = stablehlo.add %891, %889 : tensor<?x?x64xf32>
    %893 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %894 = "stablehlo.scatter"(%893, %22, %892) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
    ^bb0(%arg15: tensor<f32> loc("scatter-add:"(#loc78)), %arg16: tensor<f32> loc("scatter-add:"(#loc78))):
      %929 = stablehlo.add %arg15, %arg16 : tensor<f32>
      stablehlo.return %929 : tensor<f32>
    }) : (tensor<256x64xf32>, tensor<?x?x1xi32>, tensor<?x?x64xf32>) -> tensor<256x64xf32>
    %895 = stablehlo.add %558, %894 : tensor<256x64xf32>
    %896 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %897 = stablehlo.multiply %896, %865 : tensor<64xf32>
    %898 = stablehlo.subtract %arg2, %897 : tensor<64xf32>
    %899 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %900 = stablehlo.multiply %899, %751 : tensor<64x128xf32>
    %901 = stablehlo.subtract %arg3, %900 : tensor<64x128xf32>
    %902 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %903 = stablehlo.multiply %902, %727 : tensor<128x64xf32>
    %904 = stablehlo.subtract %arg4, %903 : tensor<128x64xf32>
    %905 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %906 = stablehlo.multiply %905, %790 : tensor<64x64xf32>
    %907 = stablehlo.subtract %arg5, %906 : tensor<64x64xf32>
    %908 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %909 = stablehlo.multiply %908, %854 : tensor<64x192xf32>
    %910 = stablehlo.subtract %arg6, %909 : tensor<64x192xf32>
    %911 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %912 = stablehlo.multiply %911, %698 : tensor<64xf32>
    %913 = stablehlo.subtract %arg7, %912 : tensor<64xf32>
    %914 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %915 = stablehlo.multiply %914, %584 : tensor<64x128xf32>
    %916 = stablehlo.subtract %arg8, %915 : tensor<64x128xf32>
    %917 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %918 = stablehlo.multiply %917, %560 : tensor<128x64xf32>
    %919 = stablehlo.subtract %arg9, %918 : tensor<128x64xf32>
    %920 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %921 = stablehlo.multiply %920, %623 : tensor<64x64xf32>
    %922 = stablehlo.subtract %arg10, %921 : tensor<64x64xf32>
    %923 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %924 = stablehlo.multiply %923, %687 : tensor<64x192xf32>
    %925 = stablehlo.subtract %arg11, %924 : tensor<64x192xf32>
    %926 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %927 = stablehlo.multiply %926, %895 : tensor<256x64xf32>
    %928 = stablehlo.subtract %arg12, %927 : tensor<256x64xf32>
    return %898, %901, %904, %907, %910, %913, %916, %919, %922, %925, %928, %528 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
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
