module @jit_transformer_train_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32> loc("p['blocks'][0]['g']"), %arg1: tensor<64x128xf32> loc("p['blocks'][0]['w1']"), %arg2: tensor<128x64xf32> loc("p['blocks'][0]['w2']"), %arg3: tensor<64x64xf32> loc("p['blocks'][0]['wo']"), %arg4: tensor<64x192xf32> loc("p['blocks'][0]['wqkv']"), %arg5: tensor<64xf32> loc("p['blocks'][1]['g']"), %arg6: tensor<64x128xf32> loc("p['blocks'][1]['w1']"), %arg7: tensor<128x64xf32> loc("p['blocks'][1]['w2']"), %arg8: tensor<64x64xf32> loc("p['blocks'][1]['wo']"), %arg9: tensor<64x192xf32> loc("p['blocks'][1]['wqkv']"), %arg10: tensor<256x64xf32> loc("p['wte']"), %arg11: tensor<2x128xi32> loc("tokens"), %arg12: tensor<2x128xi32> loc("targets")) -> (tensor<64xf32> {jax.result_info = "result[0]['blocks'][0]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][0]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][0]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][0]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][0]['wqkv']"}, tensor<64xf32> {jax.result_info = "result[0]['blocks'][1]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][1]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][1]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][1]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][1]['wqkv']"}, tensor<256x64xf32> {jax.result_info = "result[0]['wte']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %cst_3 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %cst_4 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_7 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %cst_8 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %cst_9 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_10 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<256> : tensor<i32>
    %c_12 = stablehlo.constant dense<0> : tensor<i32>
    %cst_13 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %0 = stablehlo.iota dim = 0 : tensor<128x1xf32>
    %1 = stablehlo.iota dim = 1 : tensor<1x64xf32>
    %2 = stablehlo.negate %1 : tensor<1x64xf32>
    %3 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<1x64xf32>
    %4 = stablehlo.divide %2, %3 : tensor<1x64xf32>
    %5 = stablehlo.exponential %4 : tensor<1x64xf32>
    %6 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<2x128xi32>
    %7 = stablehlo.compare LT, %arg11, %6, SIGNED : (tensor<2x128xi32>, tensor<2x128xi32>) -> tensor<2x128xi1>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x128xi32>
    %9 = stablehlo.add %arg11, %8 : tensor<2x128xi32>
    %10 = stablehlo.select %7, %9, %arg11 : tensor<2x128xi1>, tensor<2x128xi32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<2x128xi32>) -> tensor<2x128x1xi32>
    %12 = "stablehlo.gather"(%arg10, %11) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>}> : (tensor<256x64xf32>, tensor<2x128x1xi32>) -> tensor<2x128x64xf32>
    %13 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x64xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<128x64xf32>
    %15 = stablehlo.multiply %13, %14 : tensor<128x64xf32>
    %16 = stablehlo.sine %15 : tensor<128x64xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [1, 2] : (tensor<128x64xf32>) -> tensor<1x128x64xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<1x128x64xf32>) -> tensor<2x128x64xf32>
    %19 = stablehlo.add %12, %18 : tensor<2x128x64xf32>
    %20 = stablehlo.multiply %19, %19 : tensor<2x128x64xf32>
    %21 = stablehlo.reduce(%20 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %23 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %24 = stablehlo.divide %22, %23 : tensor<2x128x1xf32>
    %25 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %26 = stablehlo.add %24, %25 : tensor<2x128x1xf32>
    %27 = stablehlo.rsqrt %26 : tensor<2x128x1xf32>
    %28 = stablehlo.divide %27, %26 : tensor<2x128x1xf32>
    %29 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %30 = stablehlo.multiply %29, %28 : tensor<2x128x1xf32>
    %31 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %32 = stablehlo.multiply %19, %31 : tensor<2x128x64xf32>
    %33 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %35 = stablehlo.multiply %32, %34 : tensor<2x128x64xf32>
    %36 = stablehlo.dot_general %35, %arg4, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x192xf32>) -> tensor<2x128x192xf32>
    %37 = stablehlo.slice %36 [0:2, 0:128, 0:64] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %38 = stablehlo.slice %36 [0:2, 0:128, 64:128] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %39 = stablehlo.slice %36 [0:2, 0:128, 128:192] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %40 = stablehlo.reshape %37 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %41 = stablehlo.transpose %40, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %42 = stablehlo.reshape %38 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %43 = stablehlo.transpose %42, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %44 = stablehlo.reshape %39 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %45 = stablehlo.transpose %44, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %46 = stablehlo.transpose %43, dims = [0, 1, 3, 2] : (tensor<2x4x128x16xf32>) -> tensor<2x4x16x128xf32>
    %47 = stablehlo.dot_general %41, %46, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x128x16xf32>, tensor<2x4x16x128xf32>) -> tensor<2x4x128x128xf32>
    %48 = stablehlo.sqrt %cst_8 : tensor<f32>
    %49 = stablehlo.convert %48 : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<2x4x128x128xf32>
    %51 = stablehlo.divide %47, %50 : tensor<2x4x128x128xf32>
    %52 = stablehlo.iota dim = 0 : tensor<128x128xi32>
    %53 = stablehlo.iota dim = 1 : tensor<128x128xi32>
    %54 = stablehlo.compare GT, %53, %52, SIGNED : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi1>
    %55 = stablehlo.convert %54 : (tensor<128x128xi1>) -> tensor<128x128xf32>
    %56 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<128x128xf32>
    %57 = stablehlo.multiply %55, %56 : tensor<128x128xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [2, 3] : (tensor<128x128xf32>) -> tensor<1x1x128x128xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<1x1x128x128xf32>) -> tensor<2x4x128x128xf32>
    %60 = stablehlo.add %51, %59 : tensor<2x4x128x128xf32>
    %61 = stablehlo.reduce(%60 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %62 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x4x128xf32>
    %63 = stablehlo.maximum %62, %61 : tensor<2x4x128xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %66 = stablehlo.subtract %60, %65 : tensor<2x4x128x128xf32>
    %67 = stablehlo.exponential %66 : tensor<2x4x128x128xf32>
    %68 = stablehlo.reduce(%67 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %71 = stablehlo.divide %67, %70 : tensor<2x4x128x128xf32>
    %72 = stablehlo.multiply %69, %69 : tensor<2x4x128x1xf32>
    %73 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x4x128x1xf32>
    %74 = stablehlo.divide %73, %72 : tensor<2x4x128x1xf32>
    %75 = stablehlo.dot_general %71, %45, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x128x128xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x16xf32>
    %76 = stablehlo.transpose %75, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %77 = stablehlo.reshape %76 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %78 = stablehlo.dot_general %77, %arg3, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
    %79 = stablehlo.add %19, %78 : tensor<2x128x64xf32>
    %80 = stablehlo.multiply %79, %79 : tensor<2x128x64xf32>
    %81 = stablehlo.reduce(%80 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %83 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %84 = stablehlo.divide %82, %83 : tensor<2x128x1xf32>
    %85 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %86 = stablehlo.add %84, %85 : tensor<2x128x1xf32>
    %87 = stablehlo.rsqrt %86 : tensor<2x128x1xf32>
    %88 = stablehlo.divide %87, %86 : tensor<2x128x1xf32>
    %89 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %90 = stablehlo.multiply %89, %88 : tensor<2x128x1xf32>
    %91 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %92 = stablehlo.multiply %79, %91 : tensor<2x128x64xf32>
    %93 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %95 = stablehlo.multiply %92, %94 : tensor<2x128x64xf32>
    %96 = stablehlo.dot_general %95, %arg1, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x128xf32>) -> tensor<2x128x128xf32>
    %97 = stablehlo.multiply %96, %96 : tensor<2x128x128xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<2x128x128xf32>
    %99 = stablehlo.multiply %96, %96 : tensor<2x128x128xf32>
    %100 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<2x128x128xf32>
    %102 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %103 = stablehlo.multiply %102, %98 : tensor<2x128x128xf32>
    %104 = stablehlo.add %96, %103 : tensor<2x128x128xf32>
    %105 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<2x128x128xf32>
    %107 = stablehlo.tanh %106 : tensor<2x128x128xf32>
    %108 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %109 = stablehlo.add %108, %107 : tensor<2x128x128xf32>
    %110 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %111 = stablehlo.subtract %110, %107 : tensor<2x128x128xf32>
    %112 = stablehlo.multiply %109, %111 : tensor<2x128x128xf32>
    %113 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %114 = stablehlo.add %113, %107 : tensor<2x128x128xf32>
    %115 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %116 = stablehlo.multiply %115, %114 : tensor<2x128x128xf32>
    %117 = stablehlo.multiply %96, %116 : tensor<2x128x128xf32>
    %118 = stablehlo.dot_general %117, %arg2, contracting_dims = [2] x [0] : (tensor<2x128x128xf32>, tensor<128x64xf32>) -> tensor<2x128x64xf32>
    %119 = stablehlo.add %79, %118 : tensor<2x128x64xf32>
    %120 = stablehlo.multiply %119, %119 : tensor<2x128x64xf32>
    %121 = stablehlo.reduce(%120 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %122 = stablehlo.broadcast_in_dim %121, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %123 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %124 = stablehlo.divide %122, %123 : tensor<2x128x1xf32>
    %125 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %126 = stablehlo.add %124, %125 : tensor<2x128x1xf32>
    %127 = stablehlo.rsqrt %126 : tensor<2x128x1xf32>
    %128 = stablehlo.divide %127, %126 : tensor<2x128x1xf32>
    %129 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %130 = stablehlo.multiply %129, %128 : tensor<2x128x1xf32>
    %131 = stablehlo.broadcast_in_dim %127, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %132 = stablehlo.multiply %119, %131 : tensor<2x128x64xf32>
    %133 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %134 = stablehlo.broadcast_in_dim %133, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %135 = stablehlo.multiply %132, %134 : tensor<2x128x64xf32>
    %136 = stablehlo.dot_general %135, %arg9, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x192xf32>) -> tensor<2x128x192xf32>
    %137 = stablehlo.slice %136 [0:2, 0:128, 0:64] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %138 = stablehlo.slice %136 [0:2, 0:128, 64:128] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %139 = stablehlo.slice %136 [0:2, 0:128, 128:192] : (tensor<2x128x192xf32>) -> tensor<2x128x64xf32>
    %140 = stablehlo.reshape %137 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %141 = stablehlo.transpose %140, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %142 = stablehlo.reshape %138 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %143 = stablehlo.transpose %142, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %144 = stablehlo.reshape %139 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %145 = stablehlo.transpose %144, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %146 = stablehlo.transpose %143, dims = [0, 1, 3, 2] : (tensor<2x4x128x16xf32>) -> tensor<2x4x16x128xf32>
    %147 = stablehlo.dot_general %141, %146, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x128x16xf32>, tensor<2x4x16x128xf32>) -> tensor<2x4x128x128xf32>
    %148 = stablehlo.sqrt %cst_8 : tensor<f32>
    %149 = stablehlo.convert %148 : tensor<f32>
    %150 = stablehlo.broadcast_in_dim %149, dims = [] : (tensor<f32>) -> tensor<2x4x128x128xf32>
    %151 = stablehlo.divide %147, %150 : tensor<2x4x128x128xf32>
    %152 = stablehlo.iota dim = 0 : tensor<128x128xi32>
    %153 = stablehlo.iota dim = 1 : tensor<128x128xi32>
    %154 = stablehlo.compare GT, %153, %152, SIGNED : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi1>
    %155 = stablehlo.convert %154 : (tensor<128x128xi1>) -> tensor<128x128xf32>
    %156 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<128x128xf32>
    %157 = stablehlo.multiply %155, %156 : tensor<128x128xf32>
    %158 = stablehlo.broadcast_in_dim %157, dims = [2, 3] : (tensor<128x128xf32>) -> tensor<1x1x128x128xf32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2, 3] : (tensor<1x1x128x128xf32>) -> tensor<2x4x128x128xf32>
    %160 = stablehlo.add %151, %159 : tensor<2x4x128x128xf32>
    %161 = stablehlo.reduce(%160 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %162 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x4x128xf32>
    %163 = stablehlo.maximum %162, %161 : tensor<2x4x128xf32>
    %164 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %165 = stablehlo.broadcast_in_dim %164, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %166 = stablehlo.subtract %160, %165 : tensor<2x4x128x128xf32>
    %167 = stablehlo.exponential %166 : tensor<2x4x128x128xf32>
    %168 = stablehlo.reduce(%167 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %169 = stablehlo.broadcast_in_dim %168, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %170 = stablehlo.broadcast_in_dim %169, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %171 = stablehlo.divide %167, %170 : tensor<2x4x128x128xf32>
    %172 = stablehlo.multiply %169, %169 : tensor<2x4x128x1xf32>
    %173 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x4x128x1xf32>
    %174 = stablehlo.divide %173, %172 : tensor<2x4x128x1xf32>
    %175 = stablehlo.dot_general %171, %145, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x128x128xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x16xf32>
    %176 = stablehlo.transpose %175, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %177 = stablehlo.reshape %176 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %178 = stablehlo.dot_general %177, %arg8, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
    %179 = stablehlo.add %119, %178 : tensor<2x128x64xf32>
    %180 = stablehlo.multiply %179, %179 : tensor<2x128x64xf32>
    %181 = stablehlo.reduce(%180 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %182 = stablehlo.broadcast_in_dim %181, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %183 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %184 = stablehlo.divide %182, %183 : tensor<2x128x1xf32>
    %185 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %186 = stablehlo.add %184, %185 : tensor<2x128x1xf32>
    %187 = stablehlo.rsqrt %186 : tensor<2x128x1xf32>
    %188 = stablehlo.divide %187, %186 : tensor<2x128x1xf32>
    %189 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %190 = stablehlo.multiply %189, %188 : tensor<2x128x1xf32>
    %191 = stablehlo.broadcast_in_dim %187, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %192 = stablehlo.multiply %179, %191 : tensor<2x128x64xf32>
    %193 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %194 = stablehlo.broadcast_in_dim %193, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %195 = stablehlo.multiply %192, %194 : tensor<2x128x64xf32>
    %196 = stablehlo.dot_general %195, %arg6, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x128xf32>) -> tensor<2x128x128xf32>
    %197 = stablehlo.multiply %196, %196 : tensor<2x128x128xf32>
    %198 = stablehlo.multiply %197, %196 : tensor<2x128x128xf32>
    %199 = stablehlo.multiply %196, %196 : tensor<2x128x128xf32>
    %200 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %201 = stablehlo.multiply %200, %199 : tensor<2x128x128xf32>
    %202 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %203 = stablehlo.multiply %202, %198 : tensor<2x128x128xf32>
    %204 = stablehlo.add %196, %203 : tensor<2x128x128xf32>
    %205 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %206 = stablehlo.multiply %205, %204 : tensor<2x128x128xf32>
    %207 = stablehlo.tanh %206 : tensor<2x128x128xf32>
    %208 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %209 = stablehlo.add %208, %207 : tensor<2x128x128xf32>
    %210 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %211 = stablehlo.subtract %210, %207 : tensor<2x128x128xf32>
    %212 = stablehlo.multiply %209, %211 : tensor<2x128x128xf32>
    %213 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %214 = stablehlo.add %213, %207 : tensor<2x128x128xf32>
    %215 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %216 = stablehlo.multiply %215, %214 : tensor<2x128x128xf32>
    %217 = stablehlo.multiply %196, %216 : tensor<2x128x128xf32>
    %218 = stablehlo.dot_general %217, %arg7, contracting_dims = [2] x [0] : (tensor<2x128x128xf32>, tensor<128x64xf32>) -> tensor<2x128x64xf32>
    %219 = stablehlo.add %179, %218 : tensor<2x128x64xf32>
    %220 = stablehlo.transpose %arg10, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %221 = stablehlo.dot_general %219, %220, contracting_dims = [2] x [0] : (tensor<2x128x64xf32>, tensor<64x256xf32>) -> tensor<2x128x256xf32>
    %222 = stablehlo.reduce(%221 init: %cst_6) applies stablehlo.maximum across dimensions = [2] : (tensor<2x128x256xf32>, tensor<f32>) -> tensor<2x128xf32>
    %223 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %224 = stablehlo.maximum %223, %222 : tensor<2x128xf32>
    %225 = stablehlo.is_finite %224 : (tensor<2x128xf32>) -> tensor<2x128xi1>
    %226 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %227 = stablehlo.select %225, %224, %226 : tensor<2x128xi1>, tensor<2x128xf32>
    %228 = stablehlo.broadcast_in_dim %227, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %229 = stablehlo.broadcast_in_dim %228, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x256xf32>
    %230 = stablehlo.subtract %221, %229 : tensor<2x128x256xf32>
    %231 = stablehlo.exponential %230 : tensor<2x128x256xf32>
    %232 = stablehlo.reduce(%231 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x256xf32>, tensor<f32>) -> tensor<2x128xf32>
    %233 = stablehlo.abs %232 : tensor<2x128xf32>
    %234 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %235 = stablehlo.compare GE, %232, %234, FLOAT : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xi1>
    %236 = stablehlo.log %233 : tensor<2x128xf32>
    %237 = stablehlo.add %236, %227 : tensor<2x128xf32>
    %238 = call @_one_hot(%arg12) : (tensor<2x128xi32>) -> tensor<2x128x256xf32>
    %239 = stablehlo.multiply %221, %238 : tensor<2x128x256xf32>
    %240 = stablehlo.reduce(%239 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x256xf32>, tensor<f32>) -> tensor<2x128xf32>
    %241 = stablehlo.subtract %237, %240 : tensor<2x128xf32>
    %242 = stablehlo.reduce(%241 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x128xf32>, tensor<f32>) -> tensor<f32>
    %243 = stablehlo.divide %242, %cst_0 : tensor<f32>
    %244 = stablehlo.divide %cst_5, %cst_0 : tensor<f32>
    %245 = stablehlo.broadcast_in_dim %244, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %246 = stablehlo.negate %245 : tensor<2x128xf32>
    %247 = stablehlo.broadcast_in_dim %246, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x256xf32>
    %248 = stablehlo.multiply %247, %238 : tensor<2x128x256xf32>
    %249 = stablehlo.divide %245, %233 : tensor<2x128xf32>
    %250 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x128xf32>
    %251 = stablehlo.select %235, %250, %249 : tensor<2x128xi1>, tensor<2x128xf32>
    %252 = stablehlo.select %235, %249, %250 : tensor<2x128xi1>, tensor<2x128xf32>
    %253 = stablehlo.negate %251 : tensor<2x128xf32>
    %254 = stablehlo.add %252, %253 : tensor<2x128xf32>
    %255 = stablehlo.broadcast_in_dim %254, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x256xf32>
    %256 = stablehlo.multiply %255, %231 : tensor<2x128x256xf32>
    %257 = stablehlo.add %248, %256 : tensor<2x128x256xf32>
    %258 = stablehlo.dot_general %257, %219, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x256xf32>, tensor<2x128x64xf32>) -> tensor<256x64xf32>
    %259 = stablehlo.transpose %258, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %260 = stablehlo.dot_general %257, %220, contracting_dims = [2] x [1] : (tensor<2x128x256xf32>, tensor<64x256xf32>) -> tensor<2x128x64xf32>
    %261 = stablehlo.transpose %259, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %262 = stablehlo.dot_general %260, %217, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x64xf32>, tensor<2x128x128xf32>) -> tensor<64x128xf32>
    %263 = stablehlo.transpose %262, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %264 = stablehlo.dot_general %260, %arg7, contracting_dims = [2] x [1] : (tensor<2x128x64xf32>, tensor<128x64xf32>) -> tensor<2x128x128xf32>
    %265 = stablehlo.multiply %196, %264 : tensor<2x128x128xf32>
    %266 = stablehlo.multiply %264, %216 : tensor<2x128x128xf32>
    %267 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %268 = stablehlo.multiply %267, %265 : tensor<2x128x128xf32>
    %269 = stablehlo.multiply %268, %212 : tensor<2x128x128xf32>
    %270 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %271 = stablehlo.multiply %270, %269 : tensor<2x128x128xf32>
    %272 = stablehlo.add %266, %271 : tensor<2x128x128xf32>
    %273 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %274 = stablehlo.multiply %273, %271 : tensor<2x128x128xf32>
    %275 = stablehlo.multiply %274, %201 : tensor<2x128x128xf32>
    %276 = stablehlo.add %272, %275 : tensor<2x128x128xf32>
    %277 = stablehlo.dot_general %276, %195, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x128xf32>, tensor<2x128x64xf32>) -> tensor<128x64xf32>
    %278 = stablehlo.transpose %277, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %279 = stablehlo.dot_general %276, %arg6, contracting_dims = [2] x [1] : (tensor<2x128x128xf32>, tensor<64x128xf32>) -> tensor<2x128x64xf32>
    %280 = stablehlo.multiply %192, %279 : tensor<2x128x64xf32>
    %281 = stablehlo.reduce(%280 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<64xf32>
    %282 = stablehlo.reshape %281 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %283 = stablehlo.broadcast_in_dim %193, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %284 = stablehlo.multiply %279, %283 : tensor<2x128x64xf32>
    %285 = stablehlo.reduce(%282 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %286 = stablehlo.multiply %179, %284 : tensor<2x128x64xf32>
    %287 = stablehlo.reduce(%286 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %288 = stablehlo.reshape %287 : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %289 = stablehlo.broadcast_in_dim %187, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %290 = stablehlo.multiply %284, %289 : tensor<2x128x64xf32>
    %291 = stablehlo.add %260, %290 : tensor<2x128x64xf32>
    %292 = stablehlo.multiply %288, %190 : tensor<2x128x1xf32>
    %293 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %294 = stablehlo.divide %292, %293 : tensor<2x128x1xf32>
    %295 = stablehlo.reduce(%294 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x1xf32>, tensor<f32>) -> tensor<2x128xf32>
    %296 = stablehlo.broadcast_in_dim %295, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x64xf32>
    %297 = stablehlo.multiply %179, %296 : tensor<2x128x64xf32>
    %298 = stablehlo.multiply %296, %179 : tensor<2x128x64xf32>
    %299 = stablehlo.add %291, %298 : tensor<2x128x64xf32>
    %300 = stablehlo.add %299, %297 : tensor<2x128x64xf32>
    %301 = stablehlo.dot_general %300, %177, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x64xf32>, tensor<2x128x64xf32>) -> tensor<64x64xf32>
    %302 = stablehlo.transpose %301, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %303 = stablehlo.dot_general %300, %arg8, contracting_dims = [2] x [1] : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
    %304 = stablehlo.reshape %303 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %305 = stablehlo.transpose %304, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %306 = stablehlo.dot_general %305, %171, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x4x128x16xf32>, tensor<2x4x128x128xf32>) -> tensor<2x4x16x128xf32>
    %307 = stablehlo.transpose %306, dims = [0, 1, 3, 2] : (tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %308 = stablehlo.dot_general %305, %145, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x128xf32>
    %309 = stablehlo.broadcast_in_dim %174, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %310 = stablehlo.multiply %308, %309 : tensor<2x4x128x128xf32>
    %311 = stablehlo.multiply %310, %167 : tensor<2x4x128x128xf32>
    %312 = stablehlo.reduce(%311 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %313 = stablehlo.reshape %312 : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %314 = stablehlo.negate %313 : tensor<2x4x128x1xf32>
    %315 = stablehlo.broadcast_in_dim %169, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %316 = stablehlo.divide %308, %315 : tensor<2x4x128x128xf32>
    %317 = stablehlo.reduce(%314 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x1xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %318 = stablehlo.broadcast_in_dim %317, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x128xf32>
    %319 = stablehlo.add %316, %318 : tensor<2x4x128x128xf32>
    %320 = stablehlo.multiply %319, %167 : tensor<2x4x128x128xf32>
    %321 = stablehlo.broadcast_in_dim %149, dims = [] : (tensor<f32>) -> tensor<2x4x128x128xf32>
    %322 = stablehlo.divide %320, %321 : tensor<2x4x128x128xf32>
    %323 = stablehlo.dot_general %322, %141, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x4x128x128xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x16xf32>
    %324 = stablehlo.transpose %323, dims = [0, 1, 3, 2] : (tensor<2x4x128x16xf32>) -> tensor<2x4x16x128xf32>
    %325 = stablehlo.dot_general %322, %146, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x128x128xf32>, tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %326 = stablehlo.transpose %324, dims = [0, 1, 3, 2] : (tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %327 = stablehlo.transpose %307, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %328 = stablehlo.reshape %327 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %329 = stablehlo.transpose %326, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %330 = stablehlo.reshape %329 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %331 = stablehlo.transpose %325, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %332 = stablehlo.reshape %331 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %333 = stablehlo.concatenate %332, %330, %328, dim = 2 : (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>) -> tensor<2x128x192xf32>
    %334 = stablehlo.dot_general %333, %135, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x192xf32>, tensor<2x128x64xf32>) -> tensor<192x64xf32>
    %335 = stablehlo.transpose %334, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %336 = stablehlo.dot_general %333, %arg9, contracting_dims = [2] x [1] : (tensor<2x128x192xf32>, tensor<64x192xf32>) -> tensor<2x128x64xf32>
    %337 = stablehlo.multiply %132, %336 : tensor<2x128x64xf32>
    %338 = stablehlo.reduce(%337 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<64xf32>
    %339 = stablehlo.reshape %338 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %340 = stablehlo.broadcast_in_dim %133, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %341 = stablehlo.multiply %336, %340 : tensor<2x128x64xf32>
    %342 = stablehlo.reduce(%339 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %343 = stablehlo.add %285, %342 : tensor<64xf32>
    %344 = stablehlo.multiply %119, %341 : tensor<2x128x64xf32>
    %345 = stablehlo.reduce(%344 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %346 = stablehlo.reshape %345 : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %347 = stablehlo.broadcast_in_dim %127, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %348 = stablehlo.multiply %341, %347 : tensor<2x128x64xf32>
    %349 = stablehlo.add %300, %348 : tensor<2x128x64xf32>
    %350 = stablehlo.multiply %346, %130 : tensor<2x128x1xf32>
    %351 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %352 = stablehlo.divide %350, %351 : tensor<2x128x1xf32>
    %353 = stablehlo.reduce(%352 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x1xf32>, tensor<f32>) -> tensor<2x128xf32>
    %354 = stablehlo.broadcast_in_dim %353, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x64xf32>
    %355 = stablehlo.multiply %119, %354 : tensor<2x128x64xf32>
    %356 = stablehlo.multiply %354, %119 : tensor<2x128x64xf32>
    %357 = stablehlo.add %349, %356 : tensor<2x128x64xf32>
    %358 = stablehlo.add %357, %355 : tensor<2x128x64xf32>
    %359 = stablehlo.dot_general %358, %117, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x64xf32>, tensor<2x128x128xf32>) -> tensor<64x128xf32>
    %360 = stablehlo.transpose %359, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %361 = stablehlo.dot_general %358, %arg2, contracting_dims = [2] x [1] : (tensor<2x128x64xf32>, tensor<128x64xf32>) -> tensor<2x128x128xf32>
    %362 = stablehlo.multiply %96, %361 : tensor<2x128x128xf32>
    %363 = stablehlo.multiply %361, %116 : tensor<2x128x128xf32>
    %364 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %365 = stablehlo.multiply %364, %362 : tensor<2x128x128xf32>
    %366 = stablehlo.multiply %365, %112 : tensor<2x128x128xf32>
    %367 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %368 = stablehlo.multiply %367, %366 : tensor<2x128x128xf32>
    %369 = stablehlo.add %363, %368 : tensor<2x128x128xf32>
    %370 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x128x128xf32>
    %371 = stablehlo.multiply %370, %368 : tensor<2x128x128xf32>
    %372 = stablehlo.multiply %371, %101 : tensor<2x128x128xf32>
    %373 = stablehlo.add %369, %372 : tensor<2x128x128xf32>
    %374 = stablehlo.dot_general %373, %95, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x128xf32>, tensor<2x128x64xf32>) -> tensor<128x64xf32>
    %375 = stablehlo.transpose %374, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %376 = stablehlo.dot_general %373, %arg1, contracting_dims = [2] x [1] : (tensor<2x128x128xf32>, tensor<64x128xf32>) -> tensor<2x128x64xf32>
    %377 = stablehlo.multiply %92, %376 : tensor<2x128x64xf32>
    %378 = stablehlo.reduce(%377 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<64xf32>
    %379 = stablehlo.reshape %378 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %380 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %381 = stablehlo.multiply %376, %380 : tensor<2x128x64xf32>
    %382 = stablehlo.reduce(%379 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %383 = stablehlo.multiply %79, %381 : tensor<2x128x64xf32>
    %384 = stablehlo.reduce(%383 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %385 = stablehlo.reshape %384 : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %386 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %387 = stablehlo.multiply %381, %386 : tensor<2x128x64xf32>
    %388 = stablehlo.add %358, %387 : tensor<2x128x64xf32>
    %389 = stablehlo.multiply %385, %90 : tensor<2x128x1xf32>
    %390 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %391 = stablehlo.divide %389, %390 : tensor<2x128x1xf32>
    %392 = stablehlo.reduce(%391 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x1xf32>, tensor<f32>) -> tensor<2x128xf32>
    %393 = stablehlo.broadcast_in_dim %392, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x64xf32>
    %394 = stablehlo.multiply %79, %393 : tensor<2x128x64xf32>
    %395 = stablehlo.multiply %393, %79 : tensor<2x128x64xf32>
    %396 = stablehlo.add %388, %395 : tensor<2x128x64xf32>
    %397 = stablehlo.add %396, %394 : tensor<2x128x64xf32>
    %398 = stablehlo.dot_general %397, %77, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x64xf32>, tensor<2x128x64xf32>) -> tensor<64x64xf32>
    %399 = stablehlo.transpose %398, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %400 = stablehlo.dot_general %397, %arg3, contracting_dims = [2] x [1] : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
    %401 = stablehlo.reshape %400 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
    %402 = stablehlo.transpose %401, dims = [0, 2, 1, 3] : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
    %403 = stablehlo.dot_general %402, %71, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x4x128x16xf32>, tensor<2x4x128x128xf32>) -> tensor<2x4x16x128xf32>
    %404 = stablehlo.transpose %403, dims = [0, 1, 3, 2] : (tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %405 = stablehlo.dot_general %402, %45, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x128xf32>
    %406 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %407 = stablehlo.multiply %405, %406 : tensor<2x4x128x128xf32>
    %408 = stablehlo.multiply %407, %67 : tensor<2x4x128x128xf32>
    %409 = stablehlo.reduce(%408 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %410 = stablehlo.reshape %409 : (tensor<2x4x128xf32>) -> tensor<2x4x128x1xf32>
    %411 = stablehlo.negate %410 : tensor<2x4x128x1xf32>
    %412 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2, 3] : (tensor<2x4x128x1xf32>) -> tensor<2x4x128x128xf32>
    %413 = stablehlo.divide %405, %412 : tensor<2x4x128x128xf32>
    %414 = stablehlo.reduce(%411 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<2x4x128x1xf32>, tensor<f32>) -> tensor<2x4x128xf32>
    %415 = stablehlo.broadcast_in_dim %414, dims = [0, 1, 2] : (tensor<2x4x128xf32>) -> tensor<2x4x128x128xf32>
    %416 = stablehlo.add %413, %415 : tensor<2x4x128x128xf32>
    %417 = stablehlo.multiply %416, %67 : tensor<2x4x128x128xf32>
    %418 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<2x4x128x128xf32>
    %419 = stablehlo.divide %417, %418 : tensor<2x4x128x128xf32>
    %420 = stablehlo.dot_general %419, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x4x128x128xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x16xf32>
    %421 = stablehlo.transpose %420, dims = [0, 1, 3, 2] : (tensor<2x4x128x16xf32>) -> tensor<2x4x16x128xf32>
    %422 = stablehlo.dot_general %419, %46, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x128x128xf32>, tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %423 = stablehlo.transpose %421, dims = [0, 1, 3, 2] : (tensor<2x4x16x128xf32>) -> tensor<2x4x128x16xf32>
    %424 = stablehlo.transpose %404, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %425 = stablehlo.reshape %424 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %426 = stablehlo.transpose %423, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %427 = stablehlo.reshape %426 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %428 = stablehlo.transpose %422, dims = [0, 2, 1, 3] : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
    %429 = stablehlo.reshape %428 : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
    %430 = stablehlo.concatenate %429, %427, %425, dim = 2 : (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>) -> tensor<2x128x192xf32>
    %431 = stablehlo.dot_general %430, %35, contracting_dims = [0, 1] x [0, 1] : (tensor<2x128x192xf32>, tensor<2x128x64xf32>) -> tensor<192x64xf32>
    %432 = stablehlo.transpose %431, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %433 = stablehlo.dot_general %430, %arg4, contracting_dims = [2] x [1] : (tensor<2x128x192xf32>, tensor<64x192xf32>) -> tensor<2x128x64xf32>
    %434 = stablehlo.multiply %32, %433 : tensor<2x128x64xf32>
    %435 = stablehlo.reduce(%434 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<64xf32>
    %436 = stablehlo.reshape %435 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %437 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x128x64xf32>
    %438 = stablehlo.multiply %433, %437 : tensor<2x128x64xf32>
    %439 = stablehlo.reduce(%436 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %440 = stablehlo.add %382, %439 : tensor<64xf32>
    %441 = stablehlo.multiply %19, %438 : tensor<2x128x64xf32>
    %442 = stablehlo.reduce(%441 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128xf32>
    %443 = stablehlo.reshape %442 : (tensor<2x128xf32>) -> tensor<2x128x1xf32>
    %444 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<2x128x1xf32>) -> tensor<2x128x64xf32>
    %445 = stablehlo.multiply %438, %444 : tensor<2x128x64xf32>
    %446 = stablehlo.add %397, %445 : tensor<2x128x64xf32>
    %447 = stablehlo.multiply %443, %30 : tensor<2x128x1xf32>
    %448 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x128x1xf32>
    %449 = stablehlo.divide %447, %448 : tensor<2x128x1xf32>
    %450 = stablehlo.reduce(%449 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x128x1xf32>, tensor<f32>) -> tensor<2x128xf32>
    %451 = stablehlo.broadcast_in_dim %450, dims = [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x64xf32>
    %452 = stablehlo.multiply %19, %451 : tensor<2x128x64xf32>
    %453 = stablehlo.multiply %451, %19 : tensor<2x128x64xf32>
    %454 = stablehlo.add %446, %453 : tensor<2x128x64xf32>
    %455 = stablehlo.add %454, %452 : tensor<2x128x64xf32>
    %456 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %457 = "stablehlo.scatter"(%456, %11, %455) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
    ^bb0(%arg13: tensor<f32> loc("scatter-add:"(#loc71)), %arg14: tensor<f32> loc("scatter-add:"(#loc71))):
      %492 = stablehlo.add %arg13, %arg14 : tensor<f32>
      stablehlo.return %492 : tensor<f32>
    }) : (tensor<256x64xf32>, tensor<2x128x1xi32>, tensor<2x128x64xf32>) -> tensor<256x64xf32>
    %458 = stablehlo.add %261, %457 : tensor<256x64xf32>
    %459 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %460 = stablehlo.multiply %459, %440 : tensor<64xf32>
    %461 = stablehlo.subtract %arg0, %460 : tensor<64xf32>
    %462 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %463 = stablehlo.multiply %462, %375 : tensor<64x128xf32>
    %464 = stablehlo.subtract %arg1, %463 : tensor<64x128xf32>
    %465 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %466 = stablehlo.multiply %465, %360 : tensor<128x64xf32>
    %467 = stablehlo.subtract %arg2, %466 : tensor<128x64xf32>
    %468 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %469 = stablehlo.multiply %468, %399 : tensor<64x64xf32>
    %470 = stablehlo.subtract %arg3, %469 : tensor<64x64xf32>
    %471 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %472 = stablehlo.multiply %471, %432 : tensor<64x192xf32>
    %473 = stablehlo.subtract %arg4, %472 : tensor<64x192xf32>
    %474 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %475 = stablehlo.multiply %474, %343 : tensor<64xf32>
    %476 = stablehlo.subtract %arg5, %475 : tensor<64xf32>
    %477 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %478 = stablehlo.multiply %477, %278 : tensor<64x128xf32>
    %479 = stablehlo.subtract %arg6, %478 : tensor<64x128xf32>
    %480 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %481 = stablehlo.multiply %480, %263 : tensor<128x64xf32>
    %482 = stablehlo.subtract %arg7, %481 : tensor<128x64xf32>
    %483 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %484 = stablehlo.multiply %483, %302 : tensor<64x64xf32>
    %485 = stablehlo.subtract %arg8, %484 : tensor<64x64xf32>
    %486 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %487 = stablehlo.multiply %486, %335 : tensor<64x192xf32>
    %488 = stablehlo.subtract %arg9, %487 : tensor<64x192xf32>
    %489 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %490 = stablehlo.multiply %489, %458 : tensor<256x64xf32>
    %491 = stablehlo.subtract %arg10, %490 : tensor<256x64xf32>
    return %461, %464, %467, %470, %473, %476, %479, %482, %485, %488, %491, %243 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @_one_hot(%arg0: tensor<2x128xi32> loc(unknown)) -> tensor<2x128x256xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<2x128xi32>) -> tensor<2x128x1xi32>
    %1 = stablehlo.iota dim = 2 : tensor<1x1x256xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<2x128x1xi32>) -> tensor<2x128x256xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x1x256xi32>) -> tensor<2x128x256xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<2x128x256xi32>, tensor<2x128x256xi32>) -> tensor<2x128x256xi1>
    %5 = stablehlo.convert %4 : (tensor<2x128x256xi1>) -> tensor<2x128x256xf32>
    return %5 : tensor<2x128x256xf32>
  }
}
