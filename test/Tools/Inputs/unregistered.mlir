func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "chlo.erf"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
