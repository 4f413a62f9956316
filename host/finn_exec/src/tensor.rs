//! Activation tensors. FINN keeps every activation in a float32 container holding an
//! integer; the executor keeps the integer itself (i32 is enough: a value FINN's float32
//! arithmetic holds exactly is below 2^24 in magnitude).

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<i32>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, data: Vec<i32>) -> Tensor {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        Tensor { shape, data }
    }

    pub fn zeros(shape: &[usize]) -> Tensor {
        Tensor {
            shape: shape.to_vec(),
            data: vec![0; shape.iter().product()],
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Product of a shape.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}
