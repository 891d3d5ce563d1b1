module @jit_transformer_train_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32> loc("p['blocks'][0]['g']"), %arg1: tensor<64x128xf32> loc("p['blocks'][0]['w1']"), %arg2: tensor<128x64xf32> loc("p['blocks'][0]['w2']"), %arg3: tensor<64x64xf32> loc("p['blocks'][0]['wo']"), %arg4: tensor<64x192xf32> loc("p['blocks'][0]['wqkv']"), %arg5: tensor<64xf32> loc("p['blocks'][1]['g']"), %arg6: tensor<64x128xf32> loc("p['blocks'][1]['w1']"), %arg7: tensor<128x64xf32> loc("p['blocks'][1]['w2']"), %arg8: tensor<64x64xf32> loc("p['blocks'][1]['wo']"), %arg9: tensor<64x192xf32> loc("p['blocks'][1]['wqkv']"), %arg10: tensor<256x64xf32> loc("p['wte']"), %arg11: tensor<8x512xi32> loc("tokens"), %arg12: tensor<8x512xi32> loc("targets")) -> (tensor<64xf32> {jax.result_info = "result[0]['blocks'][0]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][0]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][0]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][0]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][0]['wqkv']"}, tensor<64xf32> {jax.result_info = "result[0]['blocks'][1]['g']"}, tensor<64x128xf32> {jax.result_info = "result[0]['blocks'][1]['w1']"}, tensor<128x64xf32> {jax.result_info = "result[0]['blocks'][1]['w2']"}, tensor<64x64xf32> {jax.result_info = "result[0]['blocks'][1]['wo']"}, tensor<64x192xf32> {jax.result_info = "result[0]['blocks'][1]['wqkv']"}, tensor<256x64xf32> {jax.result_info = "result[0]['wte']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %cst_0 = stablehlo.constant dense<4.096000e+03> : tensor<f32>
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
    %0 = stablehlo.iota dim = 0 : tensor<512x1xf32>
    %1 = stablehlo.iota dim = 1 : tensor<1x64xf32>
    %2 = stablehlo.negate %1 : tensor<1x64xf32>
    %3 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<1x64xf32>
    %4 = stablehlo.divide %2, %3 : tensor<1x64xf32>
    %5 = stablehlo.exponential %4 : tensor<1x64xf32>
    %6 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<8x512xi32>
    %7 = stablehlo.compare LT, %arg11, %6, SIGNED : (tensor<8x512xi32>, tensor<8x512xi32>) -> tensor<8x512xi1>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x512xi32>
    %9 = stablehlo.add %arg11, %8 : tensor<8x512xi32>
    %10 = stablehlo.select %7, %9, %arg11 : tensor<8x512xi1>, tensor<8x512xi32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<8x512xi32>) -> tensor<8x512x1xi32>
    %12 = "stablehlo.gather"(%arg10, %11) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>}> : (tensor<256x64xf32>, tensor<8x512x1xi32>) -> tensor<8x512x64xf32>
    %13 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x64xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<512x64xf32>
    %15 = stablehlo.multiply %13, %14 : tensor<512x64xf32>
    %16 = stablehlo.sine %15 : tensor<512x64xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [1, 2] : (tensor<512x64xf32>) -> tensor<1x512x64xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<1x512x64xf32>) -> tensor<8x512x64xf32>
    %19 = stablehlo.add %12, %18 : tensor<8x512x64xf32>
    %20 = stablehlo.multiply %19, %19 : tensor<8x512x64xf32>
    %21 = stablehlo.reduce(%20 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %23 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %24 = stablehlo.divide %22, %23 : tensor<8x512x1xf32>
    %25 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %26 = stablehlo.add %24, %25 : tensor<8x512x1xf32>
    %27 = stablehlo.rsqrt %26 : tensor<8x512x1xf32>
    %28 = stablehlo.divide %27, %26 : tensor<8x512x1xf32>
    %29 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %30 = stablehlo.multiply %29, %28 : tensor<8x512x1xf32>
    %31 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %32 = stablehlo.multiply %19, %31 : tensor<8x512x64xf32>
    %33 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %35 = stablehlo.multiply %32, %34 : tensor<8x512x64xf32>
    %36 = stablehlo.dot_general %35, %arg4, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x192xf32>) -> tensor<8x512x192xf32>
    %37 = stablehlo.slice %36 [0:8, 0:512, 0:64] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %38 = stablehlo.slice %36 [0:8, 0:512, 64:128] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %39 = stablehlo.slice %36 [0:8, 0:512, 128:192] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %40 = stablehlo.reshape %37 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %41 = stablehlo.transpose %40, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %42 = stablehlo.reshape %38 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %43 = stablehlo.transpose %42, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %44 = stablehlo.reshape %39 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %45 = stablehlo.transpose %44, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %46 = stablehlo.transpose %43, dims = [0, 1, 3, 2] : (tensor<8x4x512x16xf32>) -> tensor<8x4x16x512xf32>
    %47 = stablehlo.dot_general %41, %46, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<8x4x512x16xf32>, tensor<8x4x16x512xf32>) -> tensor<8x4x512x512xf32>
    %48 = stablehlo.sqrt %cst_8 : tensor<f32>
    %49 = stablehlo.convert %48 : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<8x4x512x512xf32>
    %51 = stablehlo.divide %47, %50 : tensor<8x4x512x512xf32>
    %52 = stablehlo.iota dim = 0 : tensor<512x512xi32>
    %53 = stablehlo.iota dim = 1 : tensor<512x512xi32>
    %54 = stablehlo.compare GT, %53, %52, SIGNED : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi1>
    %55 = stablehlo.convert %54 : (tensor<512x512xi1>) -> tensor<512x512xf32>
    %56 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %57 = stablehlo.multiply %55, %56 : tensor<512x512xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [2, 3] : (tensor<512x512xf32>) -> tensor<1x1x512x512xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<1x1x512x512xf32>) -> tensor<8x4x512x512xf32>
    %60 = stablehlo.add %51, %59 : tensor<8x4x512x512xf32>
    %61 = stablehlo.reduce(%60 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %62 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x4x512xf32>
    %63 = stablehlo.maximum %62, %61 : tensor<8x4x512xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %66 = stablehlo.subtract %60, %65 : tensor<8x4x512x512xf32>
    %67 = stablehlo.exponential %66 : tensor<8x4x512x512xf32>
    %68 = stablehlo.reduce(%67 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %71 = stablehlo.divide %67, %70 : tensor<8x4x512x512xf32>
    %72 = stablehlo.multiply %69, %69 : tensor<8x4x512x1xf32>
    %73 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x4x512x1xf32>
    %74 = stablehlo.divide %73, %72 : tensor<8x4x512x1xf32>
    %75 = stablehlo.dot_general %71, %45, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<8x4x512x512xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x16xf32>
    %76 = stablehlo.transpose %75, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %77 = stablehlo.reshape %76 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %78 = stablehlo.dot_general %77, %arg3, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x64xf32>) -> tensor<8x512x64xf32>
    %79 = stablehlo.add %19, %78 : tensor<8x512x64xf32>
    %80 = stablehlo.multiply %79, %79 : tensor<8x512x64xf32>
    %81 = stablehlo.reduce(%80 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %83 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %84 = stablehlo.divide %82, %83 : tensor<8x512x1xf32>
    %85 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %86 = stablehlo.add %84, %85 : tensor<8x512x1xf32>
    %87 = stablehlo.rsqrt %86 : tensor<8x512x1xf32>
    %88 = stablehlo.divide %87, %86 : tensor<8x512x1xf32>
    %89 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %90 = stablehlo.multiply %89, %88 : tensor<8x512x1xf32>
    %91 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %92 = stablehlo.multiply %79, %91 : tensor<8x512x64xf32>
    %93 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %95 = stablehlo.multiply %92, %94 : tensor<8x512x64xf32>
    %96 = stablehlo.dot_general %95, %arg1, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x128xf32>) -> tensor<8x512x128xf32>
    %97 = stablehlo.multiply %96, %96 : tensor<8x512x128xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<8x512x128xf32>
    %99 = stablehlo.multiply %96, %96 : tensor<8x512x128xf32>
    %100 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<8x512x128xf32>
    %102 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %103 = stablehlo.multiply %102, %98 : tensor<8x512x128xf32>
    %104 = stablehlo.add %96, %103 : tensor<8x512x128xf32>
    %105 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<8x512x128xf32>
    %107 = stablehlo.tanh %106 : tensor<8x512x128xf32>
    %108 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %109 = stablehlo.subtract %108, %107 : tensor<8x512x128xf32>
    %110 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %111 = stablehlo.add %110, %107 : tensor<8x512x128xf32>
    %112 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %113 = stablehlo.multiply %112, %111 : tensor<8x512x128xf32>
    %114 = stablehlo.multiply %96, %113 : tensor<8x512x128xf32>
    %115 = stablehlo.dot_general %114, %arg2, contracting_dims = [2] x [0] : (tensor<8x512x128xf32>, tensor<128x64xf32>) -> tensor<8x512x64xf32>
    %116 = stablehlo.add %79, %115 : tensor<8x512x64xf32>
    %117 = stablehlo.multiply %116, %116 : tensor<8x512x64xf32>
    %118 = stablehlo.reduce(%117 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %119 = stablehlo.broadcast_in_dim %118, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %120 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %121 = stablehlo.divide %119, %120 : tensor<8x512x1xf32>
    %122 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %123 = stablehlo.add %121, %122 : tensor<8x512x1xf32>
    %124 = stablehlo.rsqrt %123 : tensor<8x512x1xf32>
    %125 = stablehlo.divide %124, %123 : tensor<8x512x1xf32>
    %126 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %127 = stablehlo.multiply %126, %125 : tensor<8x512x1xf32>
    %128 = stablehlo.broadcast_in_dim %124, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %129 = stablehlo.multiply %116, %128 : tensor<8x512x64xf32>
    %130 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %131 = stablehlo.broadcast_in_dim %130, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %132 = stablehlo.multiply %129, %131 : tensor<8x512x64xf32>
    %133 = stablehlo.dot_general %132, %arg9, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x192xf32>) -> tensor<8x512x192xf32>
    %134 = stablehlo.slice %133 [0:8, 0:512, 0:64] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %135 = stablehlo.slice %133 [0:8, 0:512, 64:128] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %136 = stablehlo.slice %133 [0:8, 0:512, 128:192] : (tensor<8x512x192xf32>) -> tensor<8x512x64xf32>
    %137 = stablehlo.reshape %134 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %138 = stablehlo.transpose %137, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %139 = stablehlo.reshape %135 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %140 = stablehlo.transpose %139, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %141 = stablehlo.reshape %136 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %142 = stablehlo.transpose %141, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %143 = stablehlo.transpose %140, dims = [0, 1, 3, 2] : (tensor<8x4x512x16xf32>) -> tensor<8x4x16x512xf32>
    %144 = stablehlo.dot_general %138, %143, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<8x4x512x16xf32>, tensor<8x4x16x512xf32>) -> tensor<8x4x512x512xf32>
    %145 = stablehlo.sqrt %cst_8 : tensor<f32>
    %146 = stablehlo.convert %145 : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %146, dims = [] : (tensor<f32>) -> tensor<8x4x512x512xf32>
    %148 = stablehlo.divide %144, %147 : tensor<8x4x512x512xf32>
    %149 = stablehlo.iota dim = 0 : tensor<512x512xi32>
    %150 = stablehlo.iota dim = 1 : tensor<512x512xi32>
    %151 = stablehlo.compare GT, %150, %149, SIGNED : (tensor<512x512xi32>, tensor<512x512xi32>) -> tensor<512x512xi1>
    %152 = stablehlo.convert %151 : (tensor<512x512xi1>) -> tensor<512x512xf32>
    %153 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %154 = stablehlo.multiply %152, %153 : tensor<512x512xf32>
    %155 = stablehlo.broadcast_in_dim %154, dims = [2, 3] : (tensor<512x512xf32>) -> tensor<1x1x512x512xf32>
    %156 = stablehlo.broadcast_in_dim %155, dims = [0, 1, 2, 3] : (tensor<1x1x512x512xf32>) -> tensor<8x4x512x512xf32>
    %157 = stablehlo.add %148, %156 : tensor<8x4x512x512xf32>
    %158 = stablehlo.reduce(%157 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %159 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x4x512xf32>
    %160 = stablehlo.maximum %159, %158 : tensor<8x4x512xf32>
    %161 = stablehlo.broadcast_in_dim %160, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %162 = stablehlo.broadcast_in_dim %161, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %163 = stablehlo.subtract %157, %162 : tensor<8x4x512x512xf32>
    %164 = stablehlo.exponential %163 : tensor<8x4x512x512xf32>
    %165 = stablehlo.reduce(%164 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %166 = stablehlo.broadcast_in_dim %165, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %167 = stablehlo.broadcast_in_dim %166, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %168 = stablehlo.divide %164, %167 : tensor<8x4x512x512xf32>
    %169 = stablehlo.multiply %166, %166 : tensor<8x4x512x1xf32>
    %170 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x4x512x1xf32>
    %171 = stablehlo.divide %170, %169 : tensor<8x4x512x1xf32>
    %172 = stablehlo.dot_general %168, %142, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<8x4x512x512xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x16xf32>
    %173 = stablehlo.transpose %172, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %174 = stablehlo.reshape %173 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %175 = stablehlo.dot_general %174, %arg8, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x64xf32>) -> tensor<8x512x64xf32>
    %176 = stablehlo.add %116, %175 : tensor<8x512x64xf32>
    %177 = stablehlo.multiply %176, %176 : tensor<8x512x64xf32>
    %178 = stablehlo.reduce(%177 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %179 = stablehlo.broadcast_in_dim %178, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %180 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %181 = stablehlo.divide %179, %180 : tensor<8x512x1xf32>
    %182 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %183 = stablehlo.add %181, %182 : tensor<8x512x1xf32>
    %184 = stablehlo.rsqrt %183 : tensor<8x512x1xf32>
    %185 = stablehlo.divide %184, %183 : tensor<8x512x1xf32>
    %186 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %187 = stablehlo.multiply %186, %185 : tensor<8x512x1xf32>
    %188 = stablehlo.broadcast_in_dim %184, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %189 = stablehlo.multiply %176, %188 : tensor<8x512x64xf32>
    %190 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %191 = stablehlo.broadcast_in_dim %190, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %192 = stablehlo.multiply %189, %191 : tensor<8x512x64xf32>
    %193 = stablehlo.dot_general %192, %arg6, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x128xf32>) -> tensor<8x512x128xf32>
    %194 = stablehlo.multiply %193, %193 : tensor<8x512x128xf32>
    %195 = stablehlo.multiply %194, %193 : tensor<8x512x128xf32>
    %196 = stablehlo.multiply %193, %193 : tensor<8x512x128xf32>
    %197 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %198 = stablehlo.multiply %197, %196 : tensor<8x512x128xf32>
    %199 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %200 = stablehlo.multiply %199, %195 : tensor<8x512x128xf32>
    %201 = stablehlo.add %193, %200 : tensor<8x512x128xf32>
    %202 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %203 = stablehlo.multiply %202, %201 : tensor<8x512x128xf32>
    %204 = stablehlo.tanh %203 : tensor<8x512x128xf32>
    %205 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %206 = stablehlo.subtract %205, %204 : tensor<8x512x128xf32>
    %207 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %208 = stablehlo.add %207, %204 : tensor<8x512x128xf32>
    %209 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %210 = stablehlo.multiply %209, %208 : tensor<8x512x128xf32>
    %211 = stablehlo.multiply %193, %210 : tensor<8x512x128xf32>
    %212 = stablehlo.dot_general %211, %arg7, contracting_dims = [2] x [0] : (tensor<8x512x128xf32>, tensor<128x64xf32>) -> tensor<8x512x64xf32>
    %213 = stablehlo.add %176, %212 : tensor<8x512x64xf32>
    %214 = stablehlo.transpose %arg10, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %215 = stablehlo.dot_general %213, %214, contracting_dims = [2] x [0] : (tensor<8x512x64xf32>, tensor<64x256xf32>) -> tensor<8x512x256xf32>
    %216 = stablehlo.reduce(%215 init: %cst_6) applies stablehlo.maximum across dimensions = [2] : (tensor<8x512x256xf32>, tensor<f32>) -> tensor<8x512xf32>
    %217 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %218 = stablehlo.maximum %217, %216 : tensor<8x512xf32>
    %219 = stablehlo.is_finite %218 : (tensor<8x512xf32>) -> tensor<8x512xi1>
    %220 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %221 = stablehlo.select %219, %218, %220 : tensor<8x512xi1>, tensor<8x512xf32>
    %222 = stablehlo.broadcast_in_dim %221, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %223 = stablehlo.broadcast_in_dim %222, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x256xf32>
    %224 = stablehlo.subtract %215, %223 : tensor<8x512x256xf32>
    %225 = stablehlo.exponential %224 : tensor<8x512x256xf32>
    %226 = stablehlo.reduce(%225 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x256xf32>, tensor<f32>) -> tensor<8x512xf32>
    %227 = stablehlo.abs %226 : tensor<8x512xf32>
    %228 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %229 = stablehlo.compare GE, %226, %228, FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %230 = stablehlo.log %227 : tensor<8x512xf32>
    %231 = stablehlo.add %230, %221 : tensor<8x512xf32>
    %232 = call @_one_hot(%arg12) : (tensor<8x512xi32>) -> tensor<8x512x256xf32>
    %233 = stablehlo.multiply %215, %232 : tensor<8x512x256xf32>
    %234 = stablehlo.reduce(%233 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x256xf32>, tensor<f32>) -> tensor<8x512xf32>
    %235 = stablehlo.subtract %231, %234 : tensor<8x512xf32>
    %236 = stablehlo.reduce(%235 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x512xf32>, tensor<f32>) -> tensor<f32>
    %237 = stablehlo.divide %236, %cst_0 : tensor<f32>
    %238 = stablehlo.divide %cst_5, %cst_0 : tensor<f32>
    %239 = stablehlo.broadcast_in_dim %238, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %240 = stablehlo.negate %239 : tensor<8x512xf32>
    %241 = stablehlo.broadcast_in_dim %240, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x256xf32>
    %242 = stablehlo.multiply %241, %232 : tensor<8x512x256xf32>
    %243 = stablehlo.divide %239, %227 : tensor<8x512xf32>
    %244 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %245 = stablehlo.select %229, %244, %243 : tensor<8x512xi1>, tensor<8x512xf32>
    %246 = stablehlo.select %229, %243, %244 : tensor<8x512xi1>, tensor<8x512xf32>
    %247 = stablehlo.negate %245 : tensor<8x512xf32>
    %248 = stablehlo.add %246, %247 : tensor<8x512xf32>
    %249 = stablehlo.broadcast_in_dim %248, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x256xf32>
    %250 = stablehlo.multiply %249, %225 : tensor<8x512x256xf32>
    %251 = stablehlo.add %242, %250 : tensor<8x512x256xf32>
    %252 = stablehlo.dot_general %251, %213, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x256xf32>, tensor<8x512x64xf32>) -> tensor<256x64xf32>
    %253 = stablehlo.transpose %252, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %254 = stablehlo.dot_general %251, %214, contracting_dims = [2] x [1] : (tensor<8x512x256xf32>, tensor<64x256xf32>) -> tensor<8x512x64xf32>
    %255 = stablehlo.transpose %253, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %256 = stablehlo.dot_general %254, %211, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x64xf32>, tensor<8x512x128xf32>) -> tensor<64x128xf32>
    %257 = stablehlo.transpose %256, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %258 = stablehlo.dot_general %254, %arg7, contracting_dims = [2] x [1] : (tensor<8x512x64xf32>, tensor<128x64xf32>) -> tensor<8x512x128xf32>
    %259 = stablehlo.multiply %193, %258 : tensor<8x512x128xf32>
    %260 = stablehlo.multiply %258, %210 : tensor<8x512x128xf32>
    %261 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %262 = stablehlo.multiply %261, %259 : tensor<8x512x128xf32>
    %263 = stablehlo.multiply %262, %206 : tensor<8x512x128xf32>
    %264 = stablehlo.multiply %263, %204 : tensor<8x512x128xf32>
    %265 = stablehlo.add %263, %264 : tensor<8x512x128xf32>
    %266 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %267 = stablehlo.multiply %266, %265 : tensor<8x512x128xf32>
    %268 = stablehlo.add %260, %267 : tensor<8x512x128xf32>
    %269 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %270 = stablehlo.multiply %269, %267 : tensor<8x512x128xf32>
    %271 = stablehlo.multiply %270, %198 : tensor<8x512x128xf32>
    %272 = stablehlo.add %268, %271 : tensor<8x512x128xf32>
    %273 = stablehlo.dot_general %272, %192, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x128xf32>, tensor<8x512x64xf32>) -> tensor<128x64xf32>
    %274 = stablehlo.transpose %273, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %275 = stablehlo.dot_general %272, %arg6, contracting_dims = [2] x [1] : (tensor<8x512x128xf32>, tensor<64x128xf32>) -> tensor<8x512x64xf32>
    %276 = stablehlo.multiply %189, %275 : tensor<8x512x64xf32>
    %277 = stablehlo.reduce(%276 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<64xf32>
    %278 = stablehlo.reshape %277 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %279 = stablehlo.broadcast_in_dim %190, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %280 = stablehlo.multiply %275, %279 : tensor<8x512x64xf32>
    %281 = stablehlo.reduce(%278 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %282 = stablehlo.multiply %176, %280 : tensor<8x512x64xf32>
    %283 = stablehlo.reduce(%282 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %284 = stablehlo.reshape %283 : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %285 = stablehlo.broadcast_in_dim %184, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %286 = stablehlo.multiply %280, %285 : tensor<8x512x64xf32>
    %287 = stablehlo.add %254, %286 : tensor<8x512x64xf32>
    %288 = stablehlo.multiply %284, %187 : tensor<8x512x1xf32>
    %289 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %290 = stablehlo.divide %288, %289 : tensor<8x512x1xf32>
    %291 = stablehlo.reduce(%290 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x1xf32>, tensor<f32>) -> tensor<8x512xf32>
    %292 = stablehlo.broadcast_in_dim %291, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x64xf32>
    %293 = stablehlo.multiply %176, %292 : tensor<8x512x64xf32>
    %294 = stablehlo.add %287, %293 : tensor<8x512x64xf32>
    %295 = stablehlo.multiply %292, %176 : tensor<8x512x64xf32>
    %296 = stablehlo.add %294, %295 : tensor<8x512x64xf32>
    %297 = stablehlo.dot_general %296, %174, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x64xf32>, tensor<8x512x64xf32>) -> tensor<64x64xf32>
    %298 = stablehlo.transpose %297, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %299 = stablehlo.dot_general %296, %arg8, contracting_dims = [2] x [1] : (tensor<8x512x64xf32>, tensor<64x64xf32>) -> tensor<8x512x64xf32>
    %300 = stablehlo.reshape %299 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %301 = stablehlo.transpose %300, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %302 = stablehlo.dot_general %301, %168, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<8x4x512x16xf32>, tensor<8x4x512x512xf32>) -> tensor<8x4x16x512xf32>
    %303 = stablehlo.transpose %302, dims = [0, 1, 3, 2] : (tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %304 = stablehlo.dot_general %301, %142, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<8x4x512x16xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x512xf32>
    %305 = stablehlo.broadcast_in_dim %171, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %306 = stablehlo.multiply %304, %305 : tensor<8x4x512x512xf32>
    %307 = stablehlo.multiply %306, %164 : tensor<8x4x512x512xf32>
    %308 = stablehlo.reduce(%307 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %309 = stablehlo.reshape %308 : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %310 = stablehlo.negate %309 : tensor<8x4x512x1xf32>
    %311 = stablehlo.broadcast_in_dim %166, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %312 = stablehlo.divide %304, %311 : tensor<8x4x512x512xf32>
    %313 = stablehlo.reduce(%310 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x1xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %314 = stablehlo.broadcast_in_dim %313, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x512xf32>
    %315 = stablehlo.add %312, %314 : tensor<8x4x512x512xf32>
    %316 = stablehlo.multiply %315, %164 : tensor<8x4x512x512xf32>
    %317 = stablehlo.broadcast_in_dim %146, dims = [] : (tensor<f32>) -> tensor<8x4x512x512xf32>
    %318 = stablehlo.divide %316, %317 : tensor<8x4x512x512xf32>
    %319 = stablehlo.dot_general %318, %138, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<8x4x512x512xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x16xf32>
    %320 = stablehlo.transpose %319, dims = [0, 1, 3, 2] : (tensor<8x4x512x16xf32>) -> tensor<8x4x16x512xf32>
    %321 = stablehlo.dot_general %318, %143, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<8x4x512x512xf32>, tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %322 = stablehlo.transpose %320, dims = [0, 1, 3, 2] : (tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %323 = stablehlo.transpose %303, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %324 = stablehlo.reshape %323 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %325 = stablehlo.transpose %322, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %326 = stablehlo.reshape %325 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %327 = stablehlo.transpose %321, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %328 = stablehlo.reshape %327 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %329 = stablehlo.concatenate %328, %326, %324, dim = 2 : (tensor<8x512x64xf32>, tensor<8x512x64xf32>, tensor<8x512x64xf32>) -> tensor<8x512x192xf32>
    %330 = stablehlo.dot_general %329, %132, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x192xf32>, tensor<8x512x64xf32>) -> tensor<192x64xf32>
    %331 = stablehlo.transpose %330, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %332 = stablehlo.dot_general %329, %arg9, contracting_dims = [2] x [1] : (tensor<8x512x192xf32>, tensor<64x192xf32>) -> tensor<8x512x64xf32>
    %333 = stablehlo.multiply %129, %332 : tensor<8x512x64xf32>
    %334 = stablehlo.reduce(%333 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<64xf32>
    %335 = stablehlo.reshape %334 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %336 = stablehlo.broadcast_in_dim %130, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %337 = stablehlo.multiply %332, %336 : tensor<8x512x64xf32>
    %338 = stablehlo.reduce(%335 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %339 = stablehlo.add %281, %338 : tensor<64xf32>
    %340 = stablehlo.multiply %116, %337 : tensor<8x512x64xf32>
    %341 = stablehlo.reduce(%340 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %342 = stablehlo.reshape %341 : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %343 = stablehlo.broadcast_in_dim %124, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %344 = stablehlo.multiply %337, %343 : tensor<8x512x64xf32>
    %345 = stablehlo.add %296, %344 : tensor<8x512x64xf32>
    %346 = stablehlo.multiply %342, %127 : tensor<8x512x1xf32>
    %347 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %348 = stablehlo.divide %346, %347 : tensor<8x512x1xf32>
    %349 = stablehlo.reduce(%348 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x1xf32>, tensor<f32>) -> tensor<8x512xf32>
    %350 = stablehlo.broadcast_in_dim %349, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x64xf32>
    %351 = stablehlo.multiply %116, %350 : tensor<8x512x64xf32>
    %352 = stablehlo.add %345, %351 : tensor<8x512x64xf32>
    %353 = stablehlo.multiply %350, %116 : tensor<8x512x64xf32>
    %354 = stablehlo.add %352, %353 : tensor<8x512x64xf32>
    %355 = stablehlo.dot_general %354, %114, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x64xf32>, tensor<8x512x128xf32>) -> tensor<64x128xf32>
    %356 = stablehlo.transpose %355, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %357 = stablehlo.dot_general %354, %arg2, contracting_dims = [2] x [1] : (tensor<8x512x64xf32>, tensor<128x64xf32>) -> tensor<8x512x128xf32>
    %358 = stablehlo.multiply %96, %357 : tensor<8x512x128xf32>
    %359 = stablehlo.multiply %357, %113 : tensor<8x512x128xf32>
    %360 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %361 = stablehlo.multiply %360, %358 : tensor<8x512x128xf32>
    %362 = stablehlo.multiply %361, %109 : tensor<8x512x128xf32>
    %363 = stablehlo.multiply %362, %107 : tensor<8x512x128xf32>
    %364 = stablehlo.add %362, %363 : tensor<8x512x128xf32>
    %365 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %366 = stablehlo.multiply %365, %364 : tensor<8x512x128xf32>
    %367 = stablehlo.add %359, %366 : tensor<8x512x128xf32>
    %368 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x512x128xf32>
    %369 = stablehlo.multiply %368, %366 : tensor<8x512x128xf32>
    %370 = stablehlo.multiply %369, %101 : tensor<8x512x128xf32>
    %371 = stablehlo.add %367, %370 : tensor<8x512x128xf32>
    %372 = stablehlo.dot_general %371, %95, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x128xf32>, tensor<8x512x64xf32>) -> tensor<128x64xf32>
    %373 = stablehlo.transpose %372, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %374 = stablehlo.dot_general %371, %arg1, contracting_dims = [2] x [1] : (tensor<8x512x128xf32>, tensor<64x128xf32>) -> tensor<8x512x64xf32>
    %375 = stablehlo.multiply %92, %374 : tensor<8x512x64xf32>
    %376 = stablehlo.reduce(%375 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<64xf32>
    %377 = stablehlo.reshape %376 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %378 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %379 = stablehlo.multiply %374, %378 : tensor<8x512x64xf32>
    %380 = stablehlo.reduce(%377 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %381 = stablehlo.multiply %79, %379 : tensor<8x512x64xf32>
    %382 = stablehlo.reduce(%381 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %383 = stablehlo.reshape %382 : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %384 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %385 = stablehlo.multiply %379, %384 : tensor<8x512x64xf32>
    %386 = stablehlo.add %354, %385 : tensor<8x512x64xf32>
    %387 = stablehlo.multiply %383, %90 : tensor<8x512x1xf32>
    %388 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %389 = stablehlo.divide %387, %388 : tensor<8x512x1xf32>
    %390 = stablehlo.reduce(%389 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x1xf32>, tensor<f32>) -> tensor<8x512xf32>
    %391 = stablehlo.broadcast_in_dim %390, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x64xf32>
    %392 = stablehlo.multiply %79, %391 : tensor<8x512x64xf32>
    %393 = stablehlo.add %386, %392 : tensor<8x512x64xf32>
    %394 = stablehlo.multiply %391, %79 : tensor<8x512x64xf32>
    %395 = stablehlo.add %393, %394 : tensor<8x512x64xf32>
    %396 = stablehlo.dot_general %395, %77, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x64xf32>, tensor<8x512x64xf32>) -> tensor<64x64xf32>
    %397 = stablehlo.transpose %396, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %398 = stablehlo.dot_general %395, %arg3, contracting_dims = [2] x [1] : (tensor<8x512x64xf32>, tensor<64x64xf32>) -> tensor<8x512x64xf32>
    %399 = stablehlo.reshape %398 : (tensor<8x512x64xf32>) -> tensor<8x512x4x16xf32>
    %400 = stablehlo.transpose %399, dims = [0, 2, 1, 3] : (tensor<8x512x4x16xf32>) -> tensor<8x4x512x16xf32>
    %401 = stablehlo.dot_general %400, %71, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<8x4x512x16xf32>, tensor<8x4x512x512xf32>) -> tensor<8x4x16x512xf32>
    %402 = stablehlo.transpose %401, dims = [0, 1, 3, 2] : (tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %403 = stablehlo.dot_general %400, %45, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<8x4x512x16xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x512xf32>
    %404 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %405 = stablehlo.multiply %403, %404 : tensor<8x4x512x512xf32>
    %406 = stablehlo.multiply %405, %67 : tensor<8x4x512x512xf32>
    %407 = stablehlo.reduce(%406 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x512xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %408 = stablehlo.reshape %407 : (tensor<8x4x512xf32>) -> tensor<8x4x512x1xf32>
    %409 = stablehlo.negate %408 : tensor<8x4x512x1xf32>
    %410 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2, 3] : (tensor<8x4x512x1xf32>) -> tensor<8x4x512x512xf32>
    %411 = stablehlo.divide %403, %410 : tensor<8x4x512x512xf32>
    %412 = stablehlo.reduce(%409 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<8x4x512x1xf32>, tensor<f32>) -> tensor<8x4x512xf32>
    %413 = stablehlo.broadcast_in_dim %412, dims = [0, 1, 2] : (tensor<8x4x512xf32>) -> tensor<8x4x512x512xf32>
    %414 = stablehlo.add %411, %413 : tensor<8x4x512x512xf32>
    %415 = stablehlo.multiply %414, %67 : tensor<8x4x512x512xf32>
    %416 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<8x4x512x512xf32>
    %417 = stablehlo.divide %415, %416 : tensor<8x4x512x512xf32>
    %418 = stablehlo.dot_general %417, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<8x4x512x512xf32>, tensor<8x4x512x16xf32>) -> tensor<8x4x512x16xf32>
    %419 = stablehlo.transpose %418, dims = [0, 1, 3, 2] : (tensor<8x4x512x16xf32>) -> tensor<8x4x16x512xf32>
    %420 = stablehlo.dot_general %417, %46, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<8x4x512x512xf32>, tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %421 = stablehlo.transpose %419, dims = [0, 1, 3, 2] : (tensor<8x4x16x512xf32>) -> tensor<8x4x512x16xf32>
    %422 = stablehlo.transpose %402, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %423 = stablehlo.reshape %422 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %424 = stablehlo.transpose %421, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %425 = stablehlo.reshape %424 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %426 = stablehlo.transpose %420, dims = [0, 2, 1, 3] : (tensor<8x4x512x16xf32>) -> tensor<8x512x4x16xf32>
    %427 = stablehlo.reshape %426 : (tensor<8x512x4x16xf32>) -> tensor<8x512x64xf32>
    %428 = stablehlo.concatenate %427, %425, %423, dim = 2 : (tensor<8x512x64xf32>, tensor<8x512x64xf32>, tensor<8x512x64xf32>) -> tensor<8x512x192xf32>
    %429 = stablehlo.dot_general %428, %35, contracting_dims = [0, 1] x [0, 1] : (tensor<8x512x192xf32>, tensor<8x512x64xf32>) -> tensor<192x64xf32>
    %430 = stablehlo.transpose %429, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %431 = stablehlo.dot_general %428, %arg4, contracting_dims = [2] x [1] : (tensor<8x512x192xf32>, tensor<64x192xf32>) -> tensor<8x512x64xf32>
    %432 = stablehlo.multiply %32, %431 : tensor<8x512x64xf32>
    %433 = stablehlo.reduce(%432 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<64xf32>
    %434 = stablehlo.reshape %433 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %435 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x512x64xf32>
    %436 = stablehlo.multiply %431, %435 : tensor<8x512x64xf32>
    %437 = stablehlo.reduce(%434 init: %cst_11) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %438 = stablehlo.add %380, %437 : tensor<64xf32>
    %439 = stablehlo.multiply %19, %436 : tensor<8x512x64xf32>
    %440 = stablehlo.reduce(%439 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x64xf32>, tensor<f32>) -> tensor<8x512xf32>
    %441 = stablehlo.reshape %440 : (tensor<8x512xf32>) -> tensor<8x512x1xf32>
    %442 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<8x512x1xf32>) -> tensor<8x512x64xf32>
    %443 = stablehlo.multiply %436, %442 : tensor<8x512x64xf32>
    %444 = stablehlo.add %395, %443 : tensor<8x512x64xf32>
    %445 = stablehlo.multiply %441, %30 : tensor<8x512x1xf32>
    %446 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x512x1xf32>
    %447 = stablehlo.divide %445, %446 : tensor<8x512x1xf32>
    %448 = stablehlo.reduce(%447 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x512x1xf32>, tensor<f32>) -> tensor<8x512xf32>
    %449 = stablehlo.broadcast_in_dim %448, dims = [0, 1] : (tensor<8x512xf32>) -> tensor<8x512x64xf32>
    %450 = stablehlo.multiply %19, %449 : tensor<8x512x64xf32>
    %451 = stablehlo.add %444, %450 : tensor<8x512x64xf32>
    %452 = stablehlo.multiply %449, %19 : tensor<8x512x64xf32>
    %453 = stablehlo.add %451, %452 : tensor<8x512x64xf32>
    %454 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %455 = "stablehlo.scatter"(%454, %11, %453) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
    ^bb0(%arg13: tensor<f32> loc("scatter-add:"(#loc71)), %arg14: tensor<f32> loc("scatter-add:"(#loc71))):
      %490 = stablehlo.add %arg13, %arg14 : tensor<f32>
      stablehlo.return %490 : tensor<f32>
    }) : (tensor<256x64xf32>, tensor<8x512x1xi32>, tensor<8x512x64xf32>) -> tensor<256x64xf32>
    %456 = stablehlo.add %255, %455 : tensor<256x64xf32>
    %457 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %458 = stablehlo.multiply %457, %438 : tensor<64xf32>
    %459 = stablehlo.subtract %arg0, %458 : tensor<64xf32>
    %460 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %461 = stablehlo.multiply %460, %373 : tensor<64x128xf32>
    %462 = stablehlo.subtract %arg1, %461 : tensor<64x128xf32>
    %463 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %464 = stablehlo.multiply %463, %356 : tensor<128x64xf32>
    %465 = stablehlo.subtract %arg2, %464 : tensor<128x64xf32>
    %466 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %467 = stablehlo.multiply %466, %397 : tensor<64x64xf32>
    %468 = stablehlo.subtract %arg3, %467 : tensor<64x64xf32>
    %469 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %470 = stablehlo.multiply %469, %430 : tensor<64x192xf32>
    %471 = stablehlo.subtract %arg4, %470 : tensor<64x192xf32>
    %472 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %473 = stablehlo.multiply %472, %339 : tensor<64xf32>
    %474 = stablehlo.subtract %arg5, %473 : tensor<64xf32>
    %475 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %476 = stablehlo.multiply %475, %274 : tensor<64x128xf32>
    %477 = stablehlo.subtract %arg6, %476 : tensor<64x128xf32>
    %478 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x64xf32>
    %479 = stablehlo.multiply %478, %257 : tensor<128x64xf32>
    %480 = stablehlo.subtract %arg7, %479 : tensor<128x64xf32>
    %481 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %482 = stablehlo.multiply %481, %298 : tensor<64x64xf32>
    %483 = stablehlo.subtract %arg8, %482 : tensor<64x64xf32>
    %484 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %485 = stablehlo.multiply %484, %331 : tensor<64x192xf32>
    %486 = stablehlo.subtract %arg9, %485 : tensor<64x192xf32>
    %487 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %488 = stablehlo.multiply %487, %456 : tensor<256x64xf32>
    %489 = stablehlo.subtract %arg10, %488 : tensor<256x64xf32>
    return %459, %462, %465, %468, %471, %474, %477, %480, %483, %486, %489, %237 : tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x192xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @_one_hot(%arg0: tensor<8x512xi32> loc(unknown)) -> tensor<8x512x256xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<8x512xi32>) -> tensor<8x512x1xi32>
    %1 = stablehlo.iota dim = 2 : tensor<1x1x256xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<8x512x1xi32>) -> tensor<8x512x256xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x1x256xi32>) -> tensor<8x512x256xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<8x512x256xi32>, tensor<8x512x256xi32>) -> tensor<8x512x256xi1>
    %5 = stablehlo.convert %4 : (tensor<8x512x256xi1>) -> tensor<8x512x256xf32>
    return %5 : tensor<8x512x256xf32>
  }
}
