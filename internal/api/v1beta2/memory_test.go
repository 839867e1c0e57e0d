package v1beta2

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSparkMemory(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "512m", want: 512 * MiB},
		{in: "2g", want: 2 << 30},
		{in: "2G", want: 2 << 30},
		{in: "2gb", want: 2 << 30},
		{in: "1024k", want: 1024 << 10},
		{in: "1024KB", want: 1024 << 10},
		{in: "1t", want: 1 << 40},
		{in: "1p", want: 1 << 50},
		{in: "1073741824b", want: 1 << 30},
		{in: "4096", want: 4096 * MiB},
		{in: " 1g ", want: 1 << 30},
		{in: "0", want: 0},
		{in: "1.5g", wantErr: "Spark does not accept fractions"},
		{in: "0.5", wantErr: "Spark does not accept fractions"},
		{in: "2gi", wantErr: `unknown unit "gi"`},
		{in: "2x", wantErr: `unknown unit "x"`},
		{in: "-1g", wantErr: "not a Spark memory size"},
		{in: "", wantErr: "not a Spark memory size"},
		{in: "1 g", wantErr: "not a Spark memory size"},
		{in: "g", wantErr: "not a Spark memory size"},
		{in: "9223372036854775807", wantErr: "too large"},
		{in: "8192p", wantErr: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSparkMemory(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Contains(t, err.Error(), `"`+tt.in+`"`, "the error names the input")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseMemoryLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "4g", want: 4 << 30},
		{in: "512m", want: 512 << 20},
		{in: "2gb", want: 2 << 30},
		{in: "4Gi", want: 4 << 30},
		{in: "4G", want: 4_000_000_000},
		{in: "4096Mi", want: 4 << 30},
		{in: "1048576", want: 1 << 20},
		{in: "1.5Gi", want: 3 << 29},
		{in: "1.5g", wantErr: true},
		{in: "four", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMemoryLimit(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"`+tt.in+`"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Value())
		})
	}
}
