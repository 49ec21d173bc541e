//! [`Array<T>`]: PostgreSQL arrays with any number of dimensions and their
//! lower bounds.

use std::fmt;

use bytes::BytesMut;

use super::encode::{accepts_elements, encode_array};
use super::wire::{check_dims, dims_product, RawArray};
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// One dimension of an [`Array`]: its length and the subscript of its first
/// element (1 unless the array was built otherwise, as in
/// `'[0:2]={1,2,3}'::int4[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dimension {
    /// The number of elements along this dimension.
    pub len: usize,
    /// The subscript of the first element along this dimension.
    pub lower_bound: i32,
}

impl Dimension {
    /// The subscript of the last element (`lower_bound + len - 1`).
    pub fn upper_bound(&self) -> i64 {
        i64::from(self.lower_bound) + self.len as i64 - 1
    }
}

/// A shape that PostgreSQL cannot represent or that does not fit the
/// elements; says what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayError {
    message: String,
}

impl fmt::Display for ArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid array shape: {}", self.message)
    }
}

impl std::error::Error for ArrayError {}

impl From<String> for ArrayError {
    fn from(message: String) -> Self {
        ArrayError { message }
    }
}

/// A PostgreSQL array of any shape: up to 6 dimensions, each with its own
/// lower bound, elements stored in row-major order (the last subscript
/// varies fastest), as PostgreSQL stores them.
///
/// An empty array has no dimensions, as in PostgreSQL (`'{}'`); building one
/// with a zero-length dimension gives the same empty array.
///
/// Most arrays need no wrapper: `Vec<T>`, `Vec<Option<T>>`, `&[T]` and
/// `[T; N]` are one-dimensional arrays (lower bounds are dropped when
/// read), nested `Vec<Vec<T>>` reads and writes rectangular
/// multi-dimensional ones, one level per dimension. `Array<T>` keeps the
/// whole shape. In every form the element type written is the element type
/// of the parameter's PostgreSQL type, and a NULL element needs
/// `Option<T>`.
///
/// ```
/// use bytes::BytesMut;
/// use pgpipe_types::{Array, Decode, Dimension, Encode, Type};
///
/// // '{{1,2,3},{4,5,6}}'::int4[]
/// let a = Array::from_rows(vec![vec![1, 2, 3], vec![4, 5, 6]]).unwrap();
/// assert_eq!(a.dims(), [Dimension { len: 2, lower_bound: 1 }, Dimension { len: 3, lower_bound: 1 }]);
/// assert_eq!(a.get(&[2, 1]), Some(&4));
///
/// // '[0:2]={7,8,9}'::int4[]
/// let b = Array::from_vec(vec![7, 8, 9]).with_lower_bounds(&[0]).unwrap();
/// assert_eq!(b.get(&[0]), Some(&7));
///
/// let mut buf = BytesMut::new();
/// b.encode(&Type::INT4_ARRAY, &mut buf).unwrap();
/// assert_eq!(Array::<i32>::decode(&Type::INT4_ARRAY, &buf).unwrap(), b);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Array<T> {
    dims: Vec<Dimension>,
    elements: Vec<T>,
}

impl<T> Default for Array<T> {
    fn default() -> Self {
        Array {
            dims: Vec::new(),
            elements: Vec::new(),
        }
    }
}

impl<T> Array<T> {
    /// An array of the given shape; `elements` in row-major order. An error
    /// when the dimensions do not multiply to the number of elements, there
    /// are more than 6 of them, or a dimension does not fit PostgreSQL's
    /// 32-bit subscripts.
    ///
    /// ```
    /// use pgpipe_types::{Array, Dimension};
    ///
    /// let dims = vec![Dimension { len: 2, lower_bound: -1 }, Dimension { len: 2, lower_bound: 1 }];
    /// let a = Array::new(dims.clone(), vec!['a', 'b', 'c', 'd']).unwrap();
    /// assert_eq!(a.get(&[0, 1]), Some(&'c'));
    /// assert!(Array::new(dims, vec!['a']).is_err());
    /// ```
    pub fn new(dims: Vec<Dimension>, elements: Vec<T>) -> Result<Self, ArrayError> {
        let described = dims_product(&dims)?;
        if described != elements.len() {
            return Err(format!(
                "the dimensions describe {described} elements but {} were given",
                elements.len()
            )
            .into());
        }
        if elements.is_empty() {
            // A zero-length dimension: PostgreSQL's empty array has none.
            return Ok(Array::default());
        }
        Ok(Array { dims, elements })
    }

    /// A one-dimensional array with lower bound 1 (no dimensions when
    /// `elements` is empty).
    pub fn from_vec(elements: Vec<T>) -> Self {
        let dims = if elements.is_empty() {
            Vec::new()
        } else {
            vec![Dimension {
                len: elements.len(),
                lower_bound: 1,
            }]
        };
        Array { dims, elements }
    }

    /// A two-dimensional array from its rows, which must all have the same
    /// length (PostgreSQL arrays are rectangular). No rows, or rows that
    /// are all empty, give the empty array.
    ///
    /// ```
    /// use pgpipe_types::Array;
    ///
    /// assert!(Array::from_rows(vec![vec![1, 2], vec![3]]).is_err());
    /// assert!(Array::<i32>::from_rows(vec![vec![], vec![]]).unwrap().is_empty());
    /// ```
    pub fn from_rows(rows: Vec<Vec<T>>) -> Result<Self, ArrayError> {
        let cols = rows.first().map_or(0, Vec::len);
        if let Some((i, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
            return Err(format!(
                "row {} has {} elements but row 1 has {cols}; PostgreSQL arrays are rectangular",
                i + 1,
                row.len()
            )
            .into());
        }
        if cols == 0 {
            return Ok(Array::default());
        }
        let dims = vec![
            Dimension {
                len: rows.len(),
                lower_bound: 1,
            },
            Dimension {
                len: cols,
                lower_bound: 1,
            },
        ];
        let elements: Vec<T> = rows.into_iter().flatten().collect();
        check_dims(&dims, elements.len())?;
        Ok(Array { dims, elements })
    }

    /// The same array with the given lower bounds, one per dimension.
    pub fn with_lower_bounds(mut self, lower_bounds: &[i32]) -> Result<Self, ArrayError> {
        if lower_bounds.len() != self.dims.len() {
            return Err(format!(
                "{} lower bounds given for {} dimensions",
                lower_bounds.len(),
                self.dims.len()
            )
            .into());
        }
        for (dim, &lb) in self.dims.iter_mut().zip(lower_bounds) {
            dim.lower_bound = lb;
        }
        check_dims(&self.dims, self.elements.len())?;
        Ok(self)
    }

    /// The dimensions, outermost first; empty for an empty array.
    pub fn dims(&self) -> &[Dimension] {
        &self.dims
    }

    /// The number of dimensions (0 for an empty array).
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// The total number of elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The elements in row-major order.
    pub fn elements(&self) -> &[T] {
        &self.elements
    }

    /// The elements in row-major order, mutably (the shape stays).
    pub fn elements_mut(&mut self) -> &mut [T] {
        &mut self.elements
    }

    /// The elements in row-major order, without the shape.
    pub fn into_elements(self) -> Vec<T> {
        self.elements
    }

    /// An iterator over the elements in row-major order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.elements.iter()
    }

    /// The element at the given PostgreSQL subscripts (one per dimension,
    /// counted from each dimension's lower bound), as `a[i][j]` in SQL.
    pub fn get(&self, subscripts: &[i32]) -> Option<&T> {
        self.flat_index(subscripts).map(|i| &self.elements[i])
    }

    /// The element at the given PostgreSQL subscripts, mutably.
    pub fn get_mut(&mut self, subscripts: &[i32]) -> Option<&mut T> {
        self.flat_index(subscripts).map(|i| &mut self.elements[i])
    }

    fn flat_index(&self, subscripts: &[i32]) -> Option<usize> {
        if subscripts.len() != self.dims.len() || self.dims.is_empty() {
            return None;
        }
        let mut index = 0usize;
        for (dim, &s) in self.dims.iter().zip(subscripts) {
            let offset = usize::try_from(i64::from(s) - i64::from(dim.lower_bound)).ok()?;
            if offset >= dim.len {
                return None;
            }
            index = index * dim.len + offset;
        }
        Some(index)
    }

    /// The rows of a two-dimensional array (lower bounds dropped); an empty
    /// array gives no rows, and any other number of dimensions is an error.
    ///
    /// ```
    /// use pgpipe_types::Array;
    ///
    /// let a = Array::from_rows(vec![vec![1, 2], vec![3, 4]]).unwrap();
    /// assert_eq!(a.into_rows().unwrap(), vec![vec![1, 2], vec![3, 4]]);
    /// assert!(Array::from_vec(vec![1]).into_rows().is_err());
    /// ```
    pub fn into_rows(self) -> Result<Vec<Vec<T>>, ArrayError> {
        match self.dims.len() {
            0 => Ok(Vec::new()),
            2 => {
                let cols = self.dims[1].len;
                let mut rows = Vec::with_capacity(self.dims[0].len);
                let mut elements = self.elements.into_iter();
                for _ in 0..self.dims[0].len {
                    rows.push(elements.by_ref().take(cols).collect());
                }
                Ok(rows)
            }
            n => Err(
                format!("into_rows needs a 2-dimensional array, this one has {n} dimensions")
                    .into(),
            ),
        }
    }
}

impl<T> From<Vec<T>> for Array<T> {
    fn from(elements: Vec<T>) -> Self {
        Array::from_vec(elements)
    }
}

impl<T> IntoIterator for Array<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.elements.into_iter()
    }
}

impl<'r, T> IntoIterator for &'r Array<T> {
    type Item = &'r T;
    type IntoIter = std::slice::Iter<'r, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.elements.iter()
    }
}

impl<T: StaticType> StaticType for Array<T> {
    const TYPE: TypeRef = T::TYPE.array();
}

impl<T: Encode + StaticType> Encode for Array<T> {
    fn type_ref(&self) -> TypeRef {
        T::TYPE.array()
    }
    fn accepts(&self, ty: &Type) -> bool {
        accepts_elements(ty, T::TYPE, &self.elements)
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        // The fields are private and checked on construction, but `from_vec`
        // cannot refuse more than i32::MAX elements: check again here.
        check_dims(&self.dims, self.elements.len())
            .map_err(|e| -> BoxError { format!("cannot send {}: {e}", self.rust_type()).into() })?;
        encode_array(ty, &self.dims, &self.elements, self.rust_type(), buf)
    }
}

/// Any array, keeping its dimensions and lower bounds.
impl<'a, T: Decode<'a>> Decode<'a> for Array<T> {
    fn accepts(ty: &Type) -> bool {
        ty.element().is_some_and(T::accepts)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let array = RawArray::parse(ty, raw)?;
        let elements = array.decode_elements(ty)?;
        Ok(Array {
            dims: array.dims().to_vec(),
            elements,
        })
    }
}
